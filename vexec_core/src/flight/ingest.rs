//! Flight SQL's bulk ingest (`CommandStatementIngest`), the SQL half: the
//! target table's name, and the table an upload creates. The rows then go
//! through vexec's batch sink (`vexec/src/ingest/`), which converts them.

use arrow_schema::{DataType, Schema};

use super::catalog::quote_ident;
use super::wire::IngestTarget;
use crate::arrow::ingest::{source_of, IngestError};

/// The target's qualified name: `catalog.schema.table` as given (PostgreSQL
/// refuses a catalog other than the session's database, 0A000); a
/// temporary table lives in the session's `pg_temp`, so it may not name a
/// schema (42P16, PostgreSQL's error for a temporary table elsewhere).
pub fn target_name(t: &IngestTarget) -> Result<String, (&'static str, String)> {
    if t.table.is_empty() {
        return Err(("42602", "the ingest names no table".into()));
    }
    let mut parts = Vec::new();
    if !t.catalog.is_empty() {
        parts.push(quote_ident(&t.catalog));
    }
    match (t.temporary, t.schema.is_empty()) {
        (true, false) => {
            return Err(("42P16", "cannot create temporary relation in non-temporary schema".into()));
        }
        (true, true) => parts.push("pg_temp".into()),
        (false, false) => parts.push(quote_ident(&t.schema)),
        (false, true) if !t.catalog.is_empty() => parts.push("public".into()),
        (false, true) => {}
    }
    parts.push(quote_ident(&t.table));
    Ok(parts.join("."))
}

/// `CREATE TABLE name (...)` with a column per field of `schema`, typed as
/// the batch sink reads it (a decimal keeps its precision and scale).
pub fn create_table(name: &str, schema: &Schema) -> Result<String, IngestError> {
    if schema.fields().is_empty() {
        return Err(IngestError::Unsupported("an upload without columns".into()));
    }
    let columns = schema
        .fields()
        .iter()
        .map(|f| {
            let source = source_of(f)?;
            let sql_type = match f.data_type() {
                DataType::Decimal128(p, s) | DataType::Decimal256(p, s) if *s >= 0 => {
                    format!("numeric({p}, {s})")
                }
                _ => source.sql_name().to_string(),
            };
            Ok(format!("{} {sql_type}", quote_ident(f.name())))
        })
        .collect::<Result<Vec<_>, IngestError>>()?;
    Ok(format!("CREATE TABLE {name} ({})", columns.join(", ")))
}

#[cfg(test)]
mod tests {
    use arrow_schema::{Field, TimeUnit};

    use super::*;
    use crate::flight::wire::IfExists;

    fn target(table: &str, schema: &str, catalog: &str, temporary: bool) -> IngestTarget {
        IngestTarget {
            table: table.into(),
            schema: schema.into(),
            catalog: catalog.into(),
            temporary,
            create: true,
            if_exists: IfExists::Fail,
        }
    }

    #[test]
    fn target_names() {
        assert_eq!(target_name(&target("T", "", "", false)).unwrap(), "\"T\"");
        assert_eq!(target_name(&target("t", "s", "", false)).unwrap(), "\"s\".\"t\"");
        assert_eq!(target_name(&target("t", "s", "db", false)).unwrap(), "\"db\".\"s\".\"t\"");
        assert_eq!(target_name(&target("t", "", "db", false)).unwrap(), "\"db\".public.\"t\"");
        assert_eq!(target_name(&target("a\"b", "", "", true)).unwrap(), "pg_temp.\"a\"\"b\"");
        assert_eq!(target_name(&target("t", "s", "", true)).unwrap_err().0, "42P16");
        assert_eq!(target_name(&target("", "", "", false)).unwrap_err().0, "42602");
    }

    #[test]
    fn created_columns_follow_the_sink_types() {
        let schema = Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("Price", DataType::Decimal128(15, 2), true),
            Field::new("at", DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())), true),
            Field::new("name", DataType::Utf8, true),
        ]);
        assert_eq!(
            create_table("t", &schema).unwrap(),
            "CREATE TABLE t (\"id\" bigint, \"Price\" numeric(15, 2), \"at\" timestamptz, \"name\" text)"
        );
        assert!(create_table("t", &Schema::empty()).is_err());
        let nested = Schema::new(vec![Field::new(
            "m",
            DataType::Map(
                std::sync::Arc::new(Field::new(
                    "entries",
                    DataType::Struct(
                        vec![Field::new("k", DataType::Utf8, false), Field::new("v", DataType::Utf8, true)]
                            .into(),
                    ),
                    false,
                )),
                false,
            ),
            true,
        )]);
        assert!(create_table("t", &nested).is_err());
    }
}
