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

/// Primary key columns: catalog, schema, table, column, constraint name,
/// position in the key (1-based).
pub const PRIMARY_KEYS_SQL: &str = "SELECT current_database()::text, n.nspname::text, c.relname::text, \
       a.attname::text, con.conname::text, k.ord::text \
     FROM pg_constraint con JOIN pg_class c ON c.oid = con.conrelid \
     JOIN pg_namespace n ON n.oid = c.relnamespace \
     CROSS JOIN LATERAL unnest(con.conkey) WITH ORDINALITY AS k(attnum, ord) \
     JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum \
     WHERE con.contype = 'p' \
     ORDER BY 1, 2, 3, 5, k.ord";

/// Foreign key columns, as Flight SQL's key commands answer them: the
/// referenced (pk_) catalog, schema, table and column, the referencing
/// (fk_) ones, the position in the key, the foreign key's name, the name
/// of the referenced key's constraint ('' if none), and the ON UPDATE and
/// ON DELETE actions (pg_constraint's letters, see [`rule`]).
pub const FOREIGN_KEYS_SQL: &str = "SELECT current_database()::text, pn.nspname::text, pc.relname::text, \
       pa.attname::text, current_database()::text, fn.nspname::text, fc.relname::text, fa.attname::text, \
       k.ord::text, con.conname::text, coalesce(pk.conname, '')::text, \
       con.confupdtype::text, con.confdeltype::text \
     FROM pg_constraint con \
     JOIN pg_class fc ON fc.oid = con.conrelid JOIN pg_namespace fn ON fn.oid = fc.relnamespace \
     JOIN pg_class pc ON pc.oid = con.confrelid JOIN pg_namespace pn ON pn.oid = pc.relnamespace \
     CROSS JOIN LATERAL unnest(con.conkey, con.confkey) WITH ORDINALITY AS k(fk_att, pk_att, ord) \
     JOIN pg_attribute fa ON fa.attrelid = fc.oid AND fa.attnum = k.fk_att \
     JOIN pg_attribute pa ON pa.attrelid = pc.oid AND pa.attnum = k.pk_att \
     LEFT JOIN pg_constraint pk ON pk.conindid = con.conindid AND pk.conrelid = con.confrelid \
          AND pk.contype IN ('p', 'u') \
     WHERE con.contype = 'f' \
     ORDER BY 5, 6, 7, 10, k.ord";

/// A foreign key action (pg_constraint's `confupdtype`/`confdeltype`) as
/// Flight SQL's UpdateDeleteRules (JDBC's importedKey* values).
pub fn rule(action: &str) -> u8 {
    match action {
        "c" => 0, // CASCADE
        "r" => 1, // RESTRICT
        "n" => 2, // SET NULL
        "d" => 4, // SET DEFAULT
        _ => 3,   // NO ACTION ("a")
    }
}

/// Whether a table named (catalog, schema, table) is the one a key command
/// names: an omitted catalog or schema does not narrow the search.
pub fn names(catalog: Option<&str>, schema: Option<&str>, table: &str, row: [&str; 3]) -> bool {
    catalog.is_none_or(|c| c == row[0]) && schema.is_none_or(|s| s == row[1]) && table == row[2]
}

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
    fn key_rules_and_names() {
        assert_eq!(["c", "r", "n", "a", "d"].map(rule), [0, 1, 2, 3, 4]);
        assert!(names(None, None, "t", ["db", "public", "t"]));
        assert!(names(Some("db"), Some("public"), "t", ["db", "public", "t"]));
        assert!(!names(None, Some("other"), "t", ["db", "public", "t"]));
        assert!(!names(Some(""), None, "t", ["db", "public", "t"]));
        assert!(!names(None, None, "T", ["db", "public", "t"]));
    }

    #[test]
    fn identifiers_are_quoted() {
        assert_eq!(select_all("public", "t"), "SELECT * FROM \"public\".\"t\"");
        assert_eq!(select_all("a\"b", "x y"), "SELECT * FROM \"a\"\"b\".\"x y\"");
    }
}
