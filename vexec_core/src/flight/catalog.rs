//! Flight SQL's catalog commands on PostgreSQL: the SQL each runs in the
//! session (as the role: the catalogs show what PostgreSQL's show it), and
//! the LIKE patterns clients filter with.

/// Table types, as JDBC's PostgreSQL driver names them.
pub const TABLE_TYPES: [&str; 6] =
    ["FOREIGN TABLE", "MATERIALIZED VIEW", "SYSTEM TABLE", "SYSTEM VIEW", "TABLE", "VIEW"];

/// The session's database (Flight SQL's catalog): a session reaches no other.
pub const CATALOGS_SQL: &str = "SELECT current_database()::text";

/// Schemas: all but TOAST's and other sessions' temporary ones.
pub const SCHEMAS_SQL: &str = "SELECT current_database()::text, n.nspname::text FROM pg_namespace n \
     WHERE n.nspname <> 'pg_toast' AND n.nspname NOT LIKE 'pg\\_toast\\_temp\\_%' \
       AND (n.nspname NOT LIKE 'pg\\_temp\\_%' OR n.oid = pg_my_temp_schema()) \
     ORDER BY 2";

/// Tables, views, materialized views and foreign tables, with their types.
pub const TABLES_SQL: &str = "SELECT current_database()::text, n.nspname::text, c.relname::text, \
       CASE WHEN n.nspname IN ('pg_catalog', 'information_schema') \
            THEN CASE WHEN c.relkind IN ('v', 'm') THEN 'SYSTEM VIEW' ELSE 'SYSTEM TABLE' END \
            ELSE CASE c.relkind WHEN 'r' THEN 'TABLE' WHEN 'p' THEN 'TABLE' WHEN 'v' THEN 'VIEW' \
                 WHEN 'm' THEN 'MATERIALIZED VIEW' ELSE 'FOREIGN TABLE' END END \
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
     WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') AND n.nspname <> 'pg_toast' \
       AND n.nspname NOT LIKE 'pg\\_toast\\_temp\\_%' \
       AND (n.nspname NOT LIKE 'pg\\_temp\\_%' OR n.oid = pg_my_temp_schema()) \
     ORDER BY 2, 3";

/// `SELECT * FROM schema.table`, both quoted as identifiers (the query
/// whose result schema is the table's).
pub fn select_all(schema: &str, table: &str) -> String {
    format!("SELECT * FROM {}.{}", quote_ident(schema), quote_ident(table))
}

/// An SQL identifier, always quoted (so any name, and case, is kept).
pub fn quote_ident(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// SQL LIKE as Flight SQL's filter patterns use it (and arrow's `like`
/// kernel, which the response builders filter with): `%` any run, `_` any
/// one character, `\` escapes the next.
pub fn like(pattern: &str, s: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = s.chars().collect();
    fn go(p: &[char], t: &[char]) -> bool {
        match p.split_first() {
            None => t.is_empty(),
            Some(('%', rest)) => (0..=t.len()).any(|i| go(rest, &t[i..])),
            Some(('_', rest)) => !t.is_empty() && go(rest, &t[1..]),
            Some(('\\', rest)) if !rest.is_empty() => t.first() == Some(&rest[0]) && go(&rest[1..], &t[1..]),
            Some((c, rest)) => t.first() == Some(c) && go(rest, &t[1..]),
        }
    }
    go(&p, &t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_patterns() {
        assert!(like("%", ""));
        assert!(like("flight\\_%", "flight_open"));
        assert!(!like("flight\\_%", "flightXopen"));
        assert!(like("fl_ght%", "flight_cols"));
        assert!(!like("fl_ght", "flight_cols"));
        assert!(like("%é%", "café au lait"));
        assert!(like("a%b%c", "aXXbYc"));
        assert!(!like("a%b%c", "aXXcYb"));
        assert!(like("100\\%", "100%"));
        assert!(!like("100\\%", "1000"));
    }

    #[test]
    fn identifiers_are_quoted() {
        assert_eq!(select_all("public", "t"), "SELECT * FROM \"public\".\"t\"");
        assert_eq!(select_all("a\"b", "x y"), "SELECT * FROM \"a\"\"b\".\"x y\"");
    }
}
