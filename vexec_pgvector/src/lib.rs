//! vexec_pgvector: vexec's kernel pack for pgvector (docs/packs.md).
//!
//! It declares pgvector's scalar functions (distances, norms, arithmetic,
//! comparisons, conversions of `vector`, `halfvec`, `sparsevec` and `bit`)
//! in vexec's kernel registry (`vexec_core::packs`). vexec binds them to the
//! installed extension's functions and calls them through fmgr a batch's
//! rows at a time, so every result is pgvector's own, bit for bit. No
//! native kernel replaces any of them: pgvector's float loops are compiled
//! with flags (and per-CPU variants) whose summation order a Rust kernel
//! could not promise to reproduce.
//!
//! Load it with `shared_preload_libraries` (before or after vexec).

use vexec_core::packs::{self, FunctionV1, PackV1};

::pgrx::pg_module_magic!(name, version);

use vexec_core::pack_function as f;

/// pgvector's scalar functions (its install script, 0.7-0.8): all STRICT C
/// functions that compute on their arguments and palloc (the registry's
/// contract). Left out: type I/O, typmod input, aggregate transition
/// functions, index support.
static FUNCTIONS: &[FunctionV1] = &[
    // vector
    f!("l2_distance", "vector,vector", "l2_distance"),
    f!("inner_product", "vector,vector", "inner_product"),
    f!("cosine_distance", "vector,vector", "cosine_distance"),
    f!("l1_distance", "vector,vector", "l1_distance"),
    f!("vector_dims", "vector", "vector_dims"),
    f!("vector_norm", "vector", "vector_norm"),
    f!("l2_normalize", "vector", "l2_normalize"),
    f!("binary_quantize", "vector", "binary_quantize"),
    f!("subvector", "vector,int4,int4", "subvector"),
    f!("vector_add", "vector,vector", "vector_add"),
    f!("vector_sub", "vector,vector", "vector_sub"),
    f!("vector_mul", "vector,vector", "vector_mul"),
    f!("vector_concat", "vector,vector", "vector_concat"),
    f!("vector_lt", "vector,vector", "vector_lt"),
    f!("vector_le", "vector,vector", "vector_le"),
    f!("vector_eq", "vector,vector", "vector_eq"),
    f!("vector_ne", "vector,vector", "vector_ne"),
    f!("vector_ge", "vector,vector", "vector_ge"),
    f!("vector_gt", "vector,vector", "vector_gt"),
    f!("vector_cmp", "vector,vector", "vector_cmp"),
    f!("vector_l2_squared_distance", "vector,vector", "vector_l2_squared_distance"),
    f!("vector_negative_inner_product", "vector,vector", "vector_negative_inner_product"),
    f!("vector_spherical_distance", "vector,vector", "vector_spherical_distance"),
    f!("vector", "vector,int4,bool", "vector"),
    f!("array_to_vector", "_int4,int4,bool", "array_to_vector"),
    f!("array_to_vector", "_float4,int4,bool", "array_to_vector"),
    f!("array_to_vector", "_float8,int4,bool", "array_to_vector"),
    f!("array_to_vector", "_numeric,int4,bool", "array_to_vector"),
    f!("vector_to_float4", "vector,int4,bool", "vector_to_float4"),
    // halfvec
    f!("l2_distance", "halfvec,halfvec", "halfvec_l2_distance"),
    f!("inner_product", "halfvec,halfvec", "halfvec_inner_product"),
    f!("cosine_distance", "halfvec,halfvec", "halfvec_cosine_distance"),
    f!("l1_distance", "halfvec,halfvec", "halfvec_l1_distance"),
    f!("vector_dims", "halfvec", "halfvec_vector_dims"),
    f!("l2_norm", "halfvec", "halfvec_l2_norm"),
    f!("l2_normalize", "halfvec", "halfvec_l2_normalize"),
    f!("binary_quantize", "halfvec", "halfvec_binary_quantize"),
    f!("subvector", "halfvec,int4,int4", "halfvec_subvector"),
    f!("halfvec_add", "halfvec,halfvec", "halfvec_add"),
    f!("halfvec_sub", "halfvec,halfvec", "halfvec_sub"),
    f!("halfvec_mul", "halfvec,halfvec", "halfvec_mul"),
    f!("halfvec_concat", "halfvec,halfvec", "halfvec_concat"),
    f!("halfvec_lt", "halfvec,halfvec", "halfvec_lt"),
    f!("halfvec_le", "halfvec,halfvec", "halfvec_le"),
    f!("halfvec_eq", "halfvec,halfvec", "halfvec_eq"),
    f!("halfvec_ne", "halfvec,halfvec", "halfvec_ne"),
    f!("halfvec_ge", "halfvec,halfvec", "halfvec_ge"),
    f!("halfvec_gt", "halfvec,halfvec", "halfvec_gt"),
    f!("halfvec_cmp", "halfvec,halfvec", "halfvec_cmp"),
    f!("halfvec_l2_squared_distance", "halfvec,halfvec", "halfvec_l2_squared_distance"),
    f!("halfvec_negative_inner_product", "halfvec,halfvec", "halfvec_negative_inner_product"),
    f!("halfvec_spherical_distance", "halfvec,halfvec", "halfvec_spherical_distance"),
    f!("halfvec", "halfvec,int4,bool", "halfvec"),
    f!("halfvec_to_vector", "halfvec,int4,bool", "halfvec_to_vector"),
    f!("vector_to_halfvec", "vector,int4,bool", "vector_to_halfvec"),
    f!("array_to_halfvec", "_int4,int4,bool", "array_to_halfvec"),
    f!("array_to_halfvec", "_float4,int4,bool", "array_to_halfvec"),
    f!("array_to_halfvec", "_float8,int4,bool", "array_to_halfvec"),
    f!("array_to_halfvec", "_numeric,int4,bool", "array_to_halfvec"),
    f!("halfvec_to_float4", "halfvec,int4,bool", "halfvec_to_float4"),
    // bit
    f!("hamming_distance", "bit,bit", "hamming_distance"),
    f!("jaccard_distance", "bit,bit", "jaccard_distance"),
    // sparsevec
    f!("l2_distance", "sparsevec,sparsevec", "sparsevec_l2_distance"),
    f!("inner_product", "sparsevec,sparsevec", "sparsevec_inner_product"),
    f!("cosine_distance", "sparsevec,sparsevec", "sparsevec_cosine_distance"),
    f!("l1_distance", "sparsevec,sparsevec", "sparsevec_l1_distance"),
    f!("l2_norm", "sparsevec", "sparsevec_l2_norm"),
    f!("l2_normalize", "sparsevec", "sparsevec_l2_normalize"),
    f!("sparsevec_lt", "sparsevec,sparsevec", "sparsevec_lt"),
    f!("sparsevec_le", "sparsevec,sparsevec", "sparsevec_le"),
    f!("sparsevec_eq", "sparsevec,sparsevec", "sparsevec_eq"),
    f!("sparsevec_ne", "sparsevec,sparsevec", "sparsevec_ne"),
    f!("sparsevec_ge", "sparsevec,sparsevec", "sparsevec_ge"),
    f!("sparsevec_gt", "sparsevec,sparsevec", "sparsevec_gt"),
    f!("sparsevec_cmp", "sparsevec,sparsevec", "sparsevec_cmp"),
    f!("sparsevec_l2_squared_distance", "sparsevec,sparsevec", "sparsevec_l2_squared_distance"),
    f!("sparsevec_negative_inner_product", "sparsevec,sparsevec", "sparsevec_negative_inner_product"),
    f!("sparsevec", "sparsevec,int4,bool", "sparsevec"),
    f!("vector_to_sparsevec", "vector,int4,bool", "vector_to_sparsevec"),
    f!("sparsevec_to_vector", "sparsevec,int4,bool", "sparsevec_to_vector"),
    f!("halfvec_to_sparsevec", "halfvec,int4,bool", "halfvec_to_sparsevec"),
    f!("sparsevec_to_halfvec", "sparsevec,int4,bool", "sparsevec_to_halfvec"),
    f!("array_to_sparsevec", "_int4,int4,bool", "array_to_sparsevec"),
    f!("array_to_sparsevec", "_float4,int4,bool", "array_to_sparsevec"),
    f!("array_to_sparsevec", "_float8,int4,bool", "array_to_sparsevec"),
    f!("array_to_sparsevec", "_numeric,int4,bool", "array_to_sparsevec"),
];

static PACK: PackV1 = PackV1 {
    abi: packs::PACK_ABI,
    name: c"vexec_pgvector".as_ptr(),
    extension: c"vector".as_ptr(),
    min_version: c"0.7.0".as_ptr(),
    max_version: c"0.9".as_ptr(),
    module: c"$libdir/vector".as_ptr(),
    functions: FUNCTIONS.as_ptr(),
    n_functions: FUNCTIONS.len(),
};

vexec_core::pack_pg_init!(PACK);
