//! Expressions: compiling PostgreSQL's Expr trees into vector expressions.

pub mod compile;
