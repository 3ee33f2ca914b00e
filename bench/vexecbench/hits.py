"""A deterministic generator of ClickBench-shaped `hits` data.

The real ClickBench data set cannot be downloaded here, so this generates rows
with ClickBench's exact 105-column schema (shared/clickbench/create.sql) and
distributions chosen so that each of the 43 queries does the kind of work it
does on the real data: selective filters select, GROUP BYs have many or few
groups, HAVING and OFFSET clauses keep rows. The distributions are documented
in bench/README.md. Figures on this data are not comparable with published
ClickBench results.

Generation runs inside DuckDB (vectorized SQL over range(N)), so 10 M rows take
about a minute. Every pseudo-random choice is DuckDB's hash() of the row number
and a per-column salt, so the same N and seed give the same data on every run.
"""

# Bumped whenever the generator changes, so stale loaded data is replaced.
GENERATOR_VERSION = 1

# Syllables of synthetic words (words are 2-3 syllables: 40^3 distinct).
SYLLABLES = [
    "ka", "ro", "mi", "no", "te", "va", "li", "so", "du", "pe",
    "ra", "ne", "to", "ma", "ki", "lo", "sa", "vi", "de", "po",
    "ba", "gu", "fe", "zi", "chu", "sha", "yo", "le", "bo", "ny",
    "da", "ri", "mo", "ta", "ve", "ku", "si", "ze", "go", "pa",
]

# Sites and referring sites (a Zipf-like choice over these, then synthetic ones).
SITES = [
    "auto.ru", "irr.ru", "avito.ru", "yandex.ru", "mail.ru", "news.rambler.ru",
    "livejournal.com", "vk.com", "odnoklassniki.ru", "kinopoisk.ru", "lenta.ru",
    "rbc.ru", "gazeta.ru", "hh.ru", "drom.ru", "e1.ru", "ngs.ru", "liveinternet.ru",
]
REFERERS = [
    "yandex.ru", "go.mail.ru", "google.ru", "google.com", "vk.com", "nova.rambler.ru",
    "bing.com", "away.vk.com", "m.odnoklassniki.ru", "images.yandex.ru", "search.qip.ru",
    "facebook.com", "twitter.com", "t.co", "yabs.yandex.ru", "clck.yandex.ru",
]
PHONE_MODELS = [
    "iPad", "iPhone", "GT-I9300", "GT-N7100", "GT-I9500", "Lumia 920", "Nexus 4",
    "HTC One", "Xperia Z", "GT-S5830", "MI 2S", "ONE TOUCH 6030D", "A820", "LG-E975",
]
RESOLUTIONS = [1366, 1920, 1280, 1024, 1600, 1440, 1680, 1360, 1536, 360, 320, 768, 2560, 0]
TRAFIC_SOURCES = [0, -1, 1, 2, 3, 6, 4, 5, 7, 8, 9]
ADV_ENGINES = [2, 3, 4, 13, 27, 12, 30, 52, 1, 5]
CHARSETS = ["utf-8", "windows-1251", "koi8-r", "iso-8859-1"]
LANGUAGES = ["ru", "en", "uk", "de", "tr", "kk", "be", "fr"]
COUNTRIES = ["RU", "UA", "BY", "KZ", "US", "DE", "TR", "GB"]

# Literals the official queries look for (Q20, Q41, Q42) are given to rows.
Q20_USER_ID = 435090932899640449
Q41_REFERER_HASH = 3594120000172545465
Q42_URL_HASH = 2868770270353813622

COUNTER_62_SHARE = 0.08     # the site the dashboard queries Q37-Q43 look at


def _sql_list(values):
    return "[" + ", ".join(repr(v) if isinstance(v, str) else str(v) for v in values) + "]"


def macros(seed: int) -> list[str]:
    """DuckDB macros used by the generator."""
    # hash() of one integer is well mixed (hash() of several arguments is not:
    # values for neighbouring salts come out correlated), so row number, salt
    # and seed are folded into one integer first. Salts are below 1009.
    s = seed * 1009 * (1 << 40)
    return [
        # Uniform double in [0, 1) from a row (or other) number and a salt.
        f"CREATE OR REPLACE MACRO u(k, salt) AS (hash(k * 1009 + salt + {s}) >> 11)::DOUBLE / 9007199254740992.0",
        # A non-negative 62-bit integer.
        f"CREATE OR REPLACE MACRO h62(k, salt) AS (hash(k * 1009 + salt + {s}) >> 2)::BIGINT",
        # A signed 32-bit integer.
        f"CREATE OR REPLACE MACRO h32(k, salt) AS ((hash(k * 1009 + salt + {s}) >> 32)::BIGINT - 2147483648)::INTEGER",
        # Zipf-like index in [0, n): small indexes are much more frequent.
        "CREATE OR REPLACE MACRO skew(x, n, p) AS least(floor(pow(x, p) * n)::BIGINT, n - 1)",
        f"CREATE OR REPLACE MACRO syl(k) AS {_sql_list(SYLLABLES)}[1 + (k % 40)::INTEGER]",
        "CREATE OR REPLACE MACRO word(k) AS syl(k) || syl(k // 40) || CASE WHEN k >= 1600 THEN syl(k // 1600) ELSE '' END",
        "CREATE OR REPLACE MACRO pick(lst, x) AS lst[1 + least(floor(x * len(lst))::BIGINT, len(lst) - 1)::INTEGER]",
    ]


def select_sql(rows: int) -> str:
    """The SELECT producing `rows` rows of hits, columns in create.sql order."""
    users = max(rows // 8, 10)
    return f"""
WITH base AS (
  SELECT i,
         skew(u(i, 1), {users}, 2.5) AS usr,
         u(i, 2) < {COUNTER_62_SHARE} AS c62,
         u(i, 10) < 0.085 AS mobile,
         u(i, 11) < 0.13 AS searched,
         TIMESTAMP '2013-07-01 00:00:00' + to_seconds(floor(u(i, 4) * 31 * 86400)::BIGINT) AS et
  FROM range({rows}) t(i)
), b2 AS (
  SELECT *,
    CASE WHEN c62 THEN 62 ELSE 1 + skew(u(i, 3), 20000, 3.0) END AS counter,
    CASE WHEN usr = 3 THEN {Q20_USER_ID} ELSE h62(usr, 101) END AS user_id,
    -- search phrase: 1-4 words of a 64,000-word vocabulary, Zipf-like
    CASE WHEN searched THEN
      word(skew(u(i, 12), 64000, 3.0))
      || CASE WHEN u(i, 13) < 0.5 THEN ' ' || word(skew(u(i, 14), 64000, 3.0)) ELSE '' END
      || CASE WHEN u(i, 15) < 0.2 THEN ' ' || word(skew(u(i, 16), 64000, 2.0)) ELSE '' END
      || CASE WHEN u(i, 17) < 0.05 THEN ' ' || word(skew(u(i, 18), 64000, 1.5)) ELSE '' END
    ELSE '' END AS phrase,
    -- page: a site (a few big ones, a long tail), a path of words, an id
    CASE
      WHEN u(i, 19) < 0.015 THEN 'http://www.google.ru/search?q=' || word(skew(u(i, 20), 64000, 2.0))
      WHEN c62 THEN 'http://irr.ru/index.php?showalbum/login-' || word(skew(u(i, 21), 64000, 2.0))
                    || '/' || skew(u(i, 22), 20000, 2.0)::VARCHAR || '.html'
      ELSE 'http://' || CASE WHEN u(i, 23) < 0.6 THEN pick({_sql_list(SITES)}, pow(u(i, 24), 2.0))
                            ELSE word(skew(u(i, 25), 64000, 2.0)) || '.ru' END
           || '/' || word(skew(u(i, 26), 64000, 2.0)) || '/' || word(skew(u(i, 27), 64000, 2.0))
           || '/' || word(skew(u(i, 150), 64000, 1.5)) || '-' || word(skew(u(i, 151), 64000, 1.5))
           || '.html?id=' || (h62(i, 28) % 1000000)::VARCHAR || '&from=' || word(skew(u(i, 152), 64000, 2.0))
    END AS url,
    CASE WHEN u(i, 29) < 0.35 THEN ''
      ELSE 'http://' || CASE WHEN u(i, 30) < 0.75 THEN pick({_sql_list(REFERERS)}, pow(u(i, 31), 2.5))
                            ELSE word(skew(u(i, 32), 64000, 2.0)) || '.ru' END
           || '/' || word(skew(u(i, 33), 64000, 2.0)) || '?from=' || (h62(i, 34) % 10000)::VARCHAR
    END AS referer,
    CASE WHEN u(i, 35) < 0.02 THEN 'Google ' ELSE '' END
      || word(skew(u(i, 36), 64000, 2.0)) || ' ' || word(skew(u(i, 37), 64000, 2.0))
      || ' ' || word(skew(u(i, 38), 64000, 2.0)) || ' - ' || word(skew(u(i, 39), 64000, 3.0))
      || CASE WHEN u(i, 40) < 0.05 THEN '' ELSE ' ' || word(skew(u(i, 41), 64000, 2.0)) END AS title,
    pick({_sql_list(RESOLUTIONS)}, pow(u(usr, 42), 1.5)) AS res_w,
    pick({_sql_list(TRAFIC_SOURCES)}, pow(u(i, 43), 1.5)) AS trafic
  FROM base
)
SELECT
  -- WatchID: an odd multiplier is a bijection on 63 bits, so ids are unique
  ((i * 6364136223846793005::UHUGEINT + 1442695040888963407) % 9223372036854775807::UHUGEINT)::BIGINT AS WatchID,
  (u(i, 50) < 0.7)::SMALLINT AS JavaEnable,
  title AS Title,
  1::SMALLINT AS GoodEvent,
  et AS EventTime,
  et::DATE AS EventDate,
  counter::INTEGER AS CounterID,
  CASE WHEN u(i, 51) < 0.1 THEN h32(i, 52) ELSE h32(usr, 53) END AS ClientIP,
  (1 + skew(u(usr, 54), 3000, 4.0))::INTEGER AS RegionID,
  user_id AS UserID,
  (u(i, 55) * 3)::SMALLINT AS CounterClass,
  skew(u(usr, 56), 100, 2.0)::SMALLINT AS OS,
  skew(u(usr, 57), 60, 2.0)::SMALLINT AS UserAgent,
  url AS URL,
  referer AS Referer,
  (u(i, 58) < 0.08)::SMALLINT AS IsRefresh,
  CASE WHEN referer = '' THEN 0 ELSE 1 + skew(u(i, 59), 20, 2.0) END::SMALLINT AS RefererCategoryID,
  CASE WHEN referer = '' THEN 0 ELSE 1 + skew(u(i, 60), 3000, 4.0) END::INTEGER AS RefererRegionID,
  (1 + skew(u(i, 61), 20, 2.0))::SMALLINT AS URLCategoryID,
  (1 + skew(u(i, 62), 3000, 4.0))::INTEGER AS URLRegionID,
  res_w::SMALLINT AS ResolutionWidth,
  (CASE WHEN res_w = 0 THEN 0 ELSE res_w * 9 // 16 END)::SMALLINT AS ResolutionHeight,
  pick([24, 32, 16], u(usr, 63))::SMALLINT AS ResolutionDepth,
  skew(u(usr, 64), 15, 2.0)::SMALLINT AS FlashMajor,
  skew(u(usr, 65), 10, 2.0)::SMALLINT AS FlashMinor,
  CASE WHEN u(usr, 66) < 0.8 THEN '' ELSE skew(u(usr, 67), 300, 2.0)::VARCHAR END AS FlashMinor2,
  skew(u(usr, 68), 5, 2.0)::SMALLINT AS NetMajor,
  skew(u(usr, 69), 5, 2.0)::SMALLINT AS NetMinor,
  skew(u(usr, 70), 40, 2.0)::SMALLINT AS UserAgentMajor,
  CASE WHEN u(usr, 71) < 0.5 THEN '' ELSE skew(u(usr, 72), 100, 2.0)::VARCHAR END AS UserAgentMinor,
  (u(usr, 73) < 0.98)::SMALLINT AS CookieEnable,
  (u(usr, 74) < 0.97)::SMALLINT AS JavascriptEnable,
  mobile::SMALLINT AS IsMobile,
  CASE WHEN mobile THEN 1 + skew(u(usr, 75), 14, 1.5) ELSE 0 END::SMALLINT AS MobilePhone,
  CASE WHEN mobile THEN pick({_sql_list(PHONE_MODELS)}, pow(u(usr, 75), 1.5)) ELSE '' END AS MobilePhoneModel,
  CASE WHEN u(i, 76) < 0.9 THEN '' ELSE 'param=' || word(skew(u(i, 77), 64000, 2.0)) END AS Params,
  h32(usr, 78) AS IPNetworkID,
  trafic::SMALLINT AS TraficSourceID,
  CASE WHEN searched THEN 1 + skew(u(i, 79), 30, 2.5) ELSE 0 END::SMALLINT AS SearchEngineID,
  phrase AS SearchPhrase,
  CASE WHEN u(i, 80) < 0.97 THEN 0 ELSE pick({_sql_list(ADV_ENGINES)}, pow(u(i, 81), 2.0)) END::SMALLINT AS AdvEngineID,
  (u(i, 82) < 0.01)::SMALLINT AS IsArtifical,
  (CASE WHEN u(i, 83) < 0.1 THEN 0 ELSE greatest(res_w - skew(u(i, 84), 200, 2.0), 0) END)::SMALLINT AS WindowClientWidth,
  (CASE WHEN u(i, 83) < 0.1 THEN 0 ELSE greatest(res_w * 9 // 16 - 100 - skew(u(i, 85), 200, 2.0), 0) END)::SMALLINT AS WindowClientHeight,
  (skew(u(usr, 86), 27, 1.0) - 12)::SMALLINT AS ClientTimeZone,
  et + to_seconds(skew(u(i, 87), 600, 2.0)) AS ClientEventTime,
  skew(u(usr, 88), 6, 2.0)::SMALLINT AS SilverlightVersion1,
  skew(u(usr, 89), 10, 2.0)::SMALLINT AS SilverlightVersion2,
  skew(u(usr, 90), 60000, 2.0)::INTEGER AS SilverlightVersion3,
  skew(u(usr, 91), 10, 2.0)::SMALLINT AS SilverlightVersion4,
  pick({_sql_list(CHARSETS)}, pow(u(i, 92), 2.0)) AS PageCharset,
  (1000 + skew(u(i, 93), 500, 2.0))::INTEGER AS CodeVersion,
  (u(i, 94) < 0.04)::SMALLINT AS IsLink,
  (u(i, 95) < 0.01)::SMALLINT AS IsDownload,
  (u(i, 96) < 0.3)::SMALLINT AS IsNotBounce,
  CASE WHEN u(i, 97) < 0.5 THEN 0 ELSE h62(usr, 98) END AS FUniqID,
  CASE WHEN u(i, 99) < 0.95 THEN '' ELSE url END AS OriginalURL,
  h32(i, 100) AS HID,
  (u(i, 102) < 0.01)::SMALLINT AS IsOldCounter,
  (u(i, 103) < 0.02)::SMALLINT AS IsEvent,
  (u(i, 104) < 0.02)::SMALLINT AS IsParameter,
  (u(i, 105) < 0.05)::SMALLINT AS DontCountHits,
  (u(i, 106) < 0.05)::SMALLINT AS WithHash,
  pick(['F', 'D', 'E', 'T'], pow(u(i, 107), 2.0)) AS HitColor,
  et + to_seconds((skew(u(usr, 86), 27, 1.0) - 12) * 3600) AS LocalEventTime,
  skew(u(usr, 108), 80, 1.0)::SMALLINT AS Age,
  (u(usr, 109) * 3)::SMALLINT AS Sex,
  (u(usr, 110) * 5)::SMALLINT AS Income,
  skew(u(usr, 111), 1000, 2.0)::SMALLINT AS Interests,
  (u(i, 112) < 0.05)::SMALLINT AS Robotness,
  h32(i, 113) AS RemoteIP,
  CASE WHEN u(i, 114) < 0.9 THEN -1 ELSE h32(i, 115) END AS WindowName,
  CASE WHEN u(i, 116) < 0.9 THEN -1 ELSE h32(i, 117) END AS OpenerName,
  skew(u(i, 118), 50, 2.0)::SMALLINT AS HistoryLength,
  pick({_sql_list(LANGUAGES)}, pow(u(usr, 119), 3.0)) AS BrowserLanguage,
  pick({_sql_list(COUNTRIES)}, pow(u(usr, 120), 3.0)) AS BrowserCountry,
  '' AS SocialNetwork,
  '' AS SocialAction,
  CASE WHEN u(i, 121) < 0.995 THEN 0 ELSE pick([404, 500, 403, 502], u(i, 122)) END::SMALLINT AS HTTPError,
  skew(u(i, 123), 5000, 3.0)::INTEGER AS SendTiming,
  skew(u(i, 124), 500, 3.0)::INTEGER AS DNSTiming,
  skew(u(i, 125), 1000, 3.0)::INTEGER AS ConnectTiming,
  skew(u(i, 126), 5000, 3.0)::INTEGER AS ResponseStartTiming,
  skew(u(i, 127), 8000, 3.0)::INTEGER AS ResponseEndTiming,
  skew(u(i, 128), 8000, 3.0)::INTEGER AS FetchTiming,
  0::SMALLINT AS SocialSourceNetworkID,
  '' AS SocialSourcePage,
  CASE WHEN u(i, 129) < 0.99 THEN 0 ELSE skew(u(i, 130), 100000, 2.0) END::BIGINT AS ParamPrice,
  CASE WHEN u(i, 131) < 0.99 THEN '' ELSE (h62(i, 132) % 1000000)::VARCHAR END AS ParamOrderID,
  CASE WHEN u(i, 131) < 0.99 THEN '' ELSE 'RUB' END AS ParamCurrency,
  CASE WHEN u(i, 131) < 0.99 THEN 0 ELSE 643 END::SMALLINT AS ParamCurrencyID,
  CASE WHEN u(i, 133) < 0.97 THEN '' ELSE 'direct' END AS OpenstatServiceName,
  CASE WHEN u(i, 133) < 0.97 THEN '' ELSE (h62(i, 134) % 1000)::VARCHAR END AS OpenstatCampaignID,
  CASE WHEN u(i, 133) < 0.97 THEN '' ELSE (h62(i, 135) % 10000)::VARCHAR END AS OpenstatAdID,
  CASE WHEN u(i, 133) < 0.97 THEN '' ELSE word(skew(u(i, 136), 1000, 2.0)) END AS OpenstatSourceID,
  CASE WHEN u(i, 137) < 0.95 THEN '' ELSE pick(['yandex', 'google', 'vk', 'email'], u(i, 138)) END AS UTMSource,
  CASE WHEN u(i, 137) < 0.95 THEN '' ELSE pick(['cpc', 'banner', 'email'], u(i, 139)) END AS UTMMedium,
  CASE WHEN u(i, 137) < 0.95 THEN '' ELSE word(skew(u(i, 140), 1000, 2.0)) END AS UTMCampaign,
  '' AS UTMContent,
  CASE WHEN u(i, 137) < 0.95 THEN '' ELSE word(skew(u(i, 141), 1000, 2.0)) END AS UTMTerm,
  CASE WHEN u(i, 142) < 0.98 THEN '' ELSE 'tag' || skew(u(i, 143), 100, 2.0)::VARCHAR END AS FromTag,
  (u(i, 144) < 0.02)::SMALLINT AS HasGCLID,
  -- hashes of the referer and the page; the dashboard queries' literals are
  -- given to the most frequent referer and page of counter 62
  CASE WHEN referer = '' THEN 0
       WHEN c62 AND trafic IN (-1, 6) AND u(i, 145) < 0.3 THEN {Q41_REFERER_HASH}
       ELSE (hash(referer) >> 1)::BIGINT END AS RefererHash,
  CASE WHEN c62 AND u(i, 146) < 0.05 THEN {Q42_URL_HASH} ELSE (hash(url) >> 1)::BIGINT END AS URLHash,
  CASE WHEN u(i, 147) < 0.9 THEN 0 ELSE skew(u(i, 148), 100000, 2.0) END::INTEGER AS CLID
FROM b2
"""
