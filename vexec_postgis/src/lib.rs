//! vexec_postgis: vexec's kernel pack for PostGIS (docs/packs.md).
//!
//! It declares PostGIS's geometry functions most used in filters and
//! projections (the bounding-box operators, the spatial predicates, distance,
//! accessors and constructors of points, measures) in vexec's kernel registry
//! (`vexec_core::packs`). vexec binds them to the installed PostGIS and calls
//! its C functions through fmgr a batch's rows at a time: every result and
//! every error is PostGIS's own. The twelve 2D box operators also name
//! vexec's native box kernel (`vexec_core::packs::gserialized`), which
//! decides the rows whose boxes it reads exactly (stored boxes, points) and
//! leaves the rest to PostGIS; ST_DWithin names the native kernel for two
//! points whose distance is clearly on one side of the tolerance; the
//! predicates PostGIS answers false for disjoint boxes (ST_Intersects,
//! ST_Contains, ST_Within, ST_Covers, ST_CoveredBy, ST_Touches) name the
//! kernel that answers those rows false. Not declared: functions that read
//! `spatial_ref_sys` through SPI (ST_Transform) or run SQL, and geography.
//!
//! Load it with `shared_preload_libraries` (before or after vexec).

use vexec_core::pack_function as f;
use vexec_core::packs::gserialized::{self, BoxPredicate as B};
use vexec_core::packs::{self, FunctionV1, PackV1};

::pgrx::pg_module_magic!(name, version);

/// PostGIS 3's geometry functions: STRICT C functions that compute on their
/// arguments (GEOS for the predicates) and palloc, as the registry's
/// contract asks; their caches (prepared geometries) live in fn_extra.
static FUNCTIONS: &[FunctionV1] = &[
    // bounding-box operators: && ~= ~ @ << &< <<| &<| &> >> |&> |>> (native
    // where the boxes can be read exactly), <-> <#>
    f!("geometry_overlaps", "geometry,geometry", "gserialized_overlaps_2d", B::Overlaps),
    f!("geometry_same", "geometry,geometry", "gserialized_same_2d", B::Same),
    f!("geometry_contains", "geometry,geometry", "gserialized_contains_2d", B::Contains),
    f!("geometry_within", "geometry,geometry", "gserialized_within_2d", B::Within),
    f!("geometry_left", "geometry,geometry", "gserialized_left_2d", B::Left),
    f!("geometry_overleft", "geometry,geometry", "gserialized_overleft_2d", B::Overleft),
    f!("geometry_below", "geometry,geometry", "gserialized_below_2d", B::Below),
    f!("geometry_overbelow", "geometry,geometry", "gserialized_overbelow_2d", B::Overbelow),
    f!("geometry_overright", "geometry,geometry", "gserialized_overright_2d", B::Overright),
    f!("geometry_right", "geometry,geometry", "gserialized_right_2d", B::Right),
    f!("geometry_overabove", "geometry,geometry", "gserialized_overabove_2d", B::Overabove),
    f!("geometry_above", "geometry,geometry", "gserialized_above_2d", B::Above),
    f!("geometry_distance_centroid", "geometry,geometry", "ST_Distance"),
    f!("geometry_distance_box", "geometry,geometry", "gserialized_distance_box_2d"),
    // predicates (false for disjoint boxes natively)
    f!("st_intersects", "geometry,geometry", "ST_Intersects", gserialized::FALSE_IF_DISJOINT),
    f!("st_contains", "geometry,geometry", "contains", gserialized::FALSE_IF_DISJOINT),
    f!("st_within", "geometry,geometry", "within", gserialized::FALSE_IF_DISJOINT),
    f!("st_covers", "geometry,geometry", "covers", gserialized::FALSE_IF_DISJOINT),
    f!("st_coveredby", "geometry,geometry", "coveredby", gserialized::FALSE_IF_DISJOINT),
    f!("st_touches", "geometry,geometry", "touches", gserialized::FALSE_IF_DISJOINT),
    f!("st_disjoint", "geometry,geometry", "disjoint"),
    f!("st_equals", "geometry,geometry", "ST_Equals"),
    f!("st_dwithin", "geometry,geometry,float8", "LWGEOM_dwithin", gserialized::DWITHIN_POINTS),
    f!("st_dfullywithin", "geometry,geometry,float8", "LWGEOM_dfullywithin"),
    // measures
    f!("st_distance", "geometry,geometry", "ST_Distance"),
    f!("st_area", "geometry", "ST_Area"),
    f!("st_length", "geometry", "LWGEOM_length2d_linestring"),
    f!("st_perimeter", "geometry", "LWGEOM_perimeter2d_poly"),
    // accessors
    f!("st_x", "geometry", "LWGEOM_x_point"),
    f!("st_y", "geometry", "LWGEOM_y_point"),
    f!("st_z", "geometry", "LWGEOM_z_point"),
    f!("st_m", "geometry", "LWGEOM_m_point"),
    f!("st_srid", "geometry", "LWGEOM_get_srid"),
    f!("st_npoints", "geometry", "LWGEOM_npoints"),
    f!("st_isempty", "geometry", "LWGEOM_isempty"),
    f!("st_dimension", "geometry", "LWGEOM_dimension"),
    f!("st_numgeometries", "geometry", "LWGEOM_numgeometries_collection"),
    f!("geometrytype", "geometry", "LWGEOM_getTYPE"),
    f!("st_geometrytype", "geometry", "geometry_geometrytype"),
    f!("st_envelope", "geometry", "LWGEOM_envelope"),
    f!("st_centroid", "geometry", "centroid"),
    f!("st_pointonsurface", "geometry", "pointonsurface"),
    f!("st_astext", "geometry", "LWGEOM_asText"),
    f!("st_asbinary", "geometry", "LWGEOM_asBinary"),
    // constructors
    f!("st_makepoint", "float8,float8", "LWGEOM_makepoint"),
    f!("st_makepoint", "float8,float8,float8", "LWGEOM_makepoint"),
    f!("st_makepoint", "float8,float8,float8,float8", "LWGEOM_makepoint"),
    f!("st_point", "float8,float8", "LWGEOM_makepoint"),
    f!("st_point", "float8,float8,int4", "ST_Point"),
    f!("st_setsrid", "geometry,int4", "LWGEOM_set_srid"),
    f!("st_geomfromtext", "text", "LWGEOM_from_text"),
    f!("st_geomfromtext", "text,int4", "LWGEOM_from_text"),
];

static PACK: PackV1 = PackV1 {
    abi: packs::PACK_ABI,
    name: c"vexec_postgis".as_ptr(),
    extension: c"postgis".as_ptr(),
    min_version: c"3.0".as_ptr(),
    max_version: c"4".as_ptr(),
    module: c"$libdir/postgis-3".as_ptr(),
    functions: FUNCTIONS.as_ptr(),
    n_functions: FUNCTIONS.len(),
};

vexec_core::pack_pg_init!(PACK);
