-- On a server without vexec in shared_preload_libraries, loading vexec in a
-- session is refused with a clear error (55000: object_not_in_prerequisite_state).
\set SHOW_CONTEXT never
SHOW shared_preload_libraries;
LOAD 'vexec';
\echo :LAST_ERROR_SQLSTATE
\c
\set SHOW_CONTEXT never
CREATE EXTENSION vexec;
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS installed FROM pg_extension WHERE extname = 'vexec';

-- A kernel pack loaded without vexec: it registers its declarations (no
-- error), nothing reads them, and pgvector's functions work as ever.
\c
CREATE EXTENSION vector;
LOAD 'vexec_pgvector';
SELECT '[1,2,3]'::vector <-> '[3,2,1]' AS l2, vector_dims('[1,2]'::vector) AS dims;
DROP EXTENSION vector;
