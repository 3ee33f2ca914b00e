//! Flight SQL's metadata answers that arrow-flight has no builder for, and
//! the XDBC type list: plain Arrow, built on the gRPC thread from the rows
//! the session's catalog queries return (`vexec_core::flight::catalog`).

use std::sync::Arc;

use arrow_array::{ArrayRef, Int32Array, RecordBatch, StringArray, UInt8Array};
use arrow_flight::sql::metadata::{XdbcTypeInfo, XdbcTypeInfoData, XdbcTypeInfoDataBuilder};
use arrow_flight::sql::{Nullable, Searchable, XdbcDataType, XdbcDatetimeSubcode};
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef};
use vexec_core::flight::catalog;

/// GetPrimaryKeys' schema (Flight SQL's).
pub fn primary_keys_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("catalog_name", DataType::Utf8, true),
        Field::new("db_schema_name", DataType::Utf8, true),
        Field::new("table_name", DataType::Utf8, false),
        Field::new("column_name", DataType::Utf8, false),
        Field::new("key_name", DataType::Utf8, true),
        Field::new("key_sequence", DataType::Int32, false),
    ]))
}

/// The schema of GetImportedKeys, GetExportedKeys and GetCrossReference.
pub fn foreign_keys_schema() -> SchemaRef {
    let text = |name: &str, nullable| Field::new(name, DataType::Utf8, nullable);
    Arc::new(Schema::new(vec![
        text("pk_catalog_name", true),
        text("pk_db_schema_name", true),
        text("pk_table_name", false),
        text("pk_column_name", false),
        text("fk_catalog_name", true),
        text("fk_db_schema_name", true),
        text("fk_table_name", false),
        text("fk_column_name", false),
        Field::new("key_sequence", DataType::Int32, false),
        text("fk_key_name", true),
        text("pk_key_name", true),
        Field::new("update_rule", DataType::UInt8, false),
        Field::new("delete_rule", DataType::UInt8, false),
    ]))
}

fn strings(rows: &[&Vec<String>], i: usize, empty_is_null: bool) -> ArrayRef {
    Arc::new(StringArray::from_iter(
        rows.iter().map(|r| Some(r[i].as_str()).filter(|s| !(empty_is_null && s.is_empty()))),
    ))
}

fn ints(rows: &[&Vec<String>], i: usize) -> Result<ArrayRef, ArrowError> {
    let v = rows
        .iter()
        .map(|r| r[i].parse::<i32>().map_err(|e| ArrowError::ParseError(e.to_string())))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Arc::new(Int32Array::from(v)))
}

/// Rows of `catalog::PRIMARY_KEYS_SQL` as GetPrimaryKeys' batch.
pub fn primary_keys(rows: &[&Vec<String>]) -> Result<RecordBatch, ArrowError> {
    let columns: Vec<ArrayRef> = vec![
        strings(rows, 0, false),
        strings(rows, 1, false),
        strings(rows, 2, false),
        strings(rows, 3, false),
        strings(rows, 4, true),
        ints(rows, 5)?,
    ];
    RecordBatch::try_new(primary_keys_schema(), columns)
}

/// Rows of `catalog::FOREIGN_KEYS_SQL` as the foreign key commands' batch.
pub fn foreign_keys(rows: &[&Vec<String>]) -> Result<RecordBatch, ArrowError> {
    let mut columns: Vec<ArrayRef> = (0..8).map(|i| strings(rows, i, false)).collect();
    columns.push(ints(rows, 8)?);
    columns.push(strings(rows, 9, true));
    columns.push(strings(rows, 10, true));
    for i in [11, 12] {
        columns.push(Arc::new(UInt8Array::from_iter_values(rows.iter().map(|r| catalog::rule(&r[i])))));
    }
    RecordBatch::try_new(foreign_keys_schema(), columns)
}

/// The types GetXdbcTypeInfo lists: PostgreSQL's built-in scalar types that
/// vexec's egress maps to Arrow, described as PostgreSQL's JDBC driver
/// describes them.
pub fn xdbc_types() -> Result<XdbcTypeInfoData, ArrowError> {
    let mut builder = XdbcTypeInfoDataBuilder::new();
    // (name, pg_type name, type, size, quoted literal, create params, case sensitive, max scale)
    let types: [(&str, &str, XdbcDataType, i32, bool, &[&str], bool, Option<i32>); 12] = [
        ("boolean", "bool", XdbcDataType::XdbcBit, 1, false, &[], false, None),
        ("smallint", "int2", XdbcDataType::XdbcSmallint, 5, false, &[], false, None),
        ("integer", "int4", XdbcDataType::XdbcInteger, 10, false, &[], false, None),
        ("bigint", "int8", XdbcDataType::XdbcBigint, 19, false, &[], false, None),
        ("real", "float4", XdbcDataType::XdbcReal, 8, false, &[], false, None),
        ("double precision", "float8", XdbcDataType::XdbcDouble, 17, false, &[], false, None),
        (
            "numeric",
            "numeric",
            XdbcDataType::XdbcNumeric,
            1000,
            false,
            &["precision", "scale"],
            false,
            Some(1000),
        ),
        ("text", "text", XdbcDataType::XdbcVarchar, i32::MAX, true, &[], true, None),
        (
            "character varying",
            "varchar",
            XdbcDataType::XdbcVarchar,
            10_485_760,
            true,
            &["length"],
            true,
            None,
        ),
        ("character", "bpchar", XdbcDataType::XdbcChar, 10_485_760, true, &["length"], true, None),
        ("bytea", "bytea", XdbcDataType::XdbcBinary, i32::MAX, true, &[], false, None),
        ("uuid", "uuid", XdbcDataType::XdbcBinary, 16, true, &[], false, None),
    ];
    for (name, local, data_type, size, quoted, params, case_sensitive, max_scale) in types {
        let numeric = !quoted && data_type != XdbcDataType::XdbcBit;
        builder.append(XdbcTypeInfo {
            type_name: name.into(),
            data_type,
            column_size: Some(size),
            literal_prefix: quoted.then(|| "'".into()),
            literal_suffix: quoted.then(|| "'".into()),
            create_params: (!params.is_empty()).then(|| params.iter().map(|p| p.to_string()).collect()),
            nullable: Nullable::NullabilityNullable,
            case_sensitive,
            searchable: Searchable::Full,
            unsigned_attribute: numeric.then_some(false),
            fixed_prec_scale: false,
            auto_increment: numeric.then_some(false),
            local_type_name: Some(local.into()),
            minimum_scale: max_scale.map(|_| 0),
            maximum_scale: max_scale,
            sql_data_type: data_type,
            datetime_subcode: None,
            num_prec_radix: numeric.then_some(10),
            interval_precision: None,
        });
    }
    // Dates and times: ODBC's concise type, SQL_DATETIME and its subcode.
    let datetimes = [
        // (Flight SQL's subcode 1 is DATE, generated under its alias YEAR.)
        ("date", "date", XdbcDataType::XdbcDate, 13, XdbcDatetimeSubcode::XdbcSubcodeYear),
        ("time without time zone", "time", XdbcDataType::XdbcTime, 15, XdbcDatetimeSubcode::XdbcSubcodeTime),
        (
            "timestamp without time zone",
            "timestamp",
            XdbcDataType::XdbcTimestamp,
            29,
            XdbcDatetimeSubcode::XdbcSubcodeTimestamp,
        ),
        (
            "timestamp with time zone",
            "timestamptz",
            XdbcDataType::XdbcTimestamp,
            35,
            XdbcDatetimeSubcode::XdbcSubcodeTimestampWithTimezone,
        ),
    ];
    for (name, local, data_type, size, subcode) in datetimes {
        builder.append(XdbcTypeInfo {
            type_name: name.into(),
            data_type,
            column_size: Some(size),
            literal_prefix: Some("'".into()),
            literal_suffix: Some("'".into()),
            create_params: None,
            nullable: Nullable::NullabilityNullable,
            case_sensitive: false,
            searchable: Searchable::Full,
            unsigned_attribute: None,
            fixed_prec_scale: false,
            auto_increment: None,
            local_type_name: Some(local.into()),
            minimum_scale: None,
            maximum_scale: None,
            sql_data_type: XdbcDataType::XdbcDatetime,
            datetime_subcode: Some(subcode),
            num_prec_radix: None,
            interval_precision: None,
        });
    }
    builder.build().map_err(|e| ArrowError::ExternalError(Box::new(e)))
}
