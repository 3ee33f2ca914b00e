//! Temporary files for operators that outgrow `hash_mem` (VecAgg, VecHashJoin).
//!
//! A spill file is a PostgreSQL BufFile (so `temp_tablespaces`,
//! `temp_file_limit` and `log_temp_files` apply) holding frames: a frame is
//! the row count, the byte length and the rows as `vexec_core::spill`
//! encodes them. Rows are appended in input order and read back in the same
//! order, which keeps every group's rows in the order PostgreSQL would feed
//! them.
//!
//! Cleanup: a file is closed by [`SpillFile::close`] when the node ends
//! normally. When the query fails, the transaction's resource owner has
//! already closed the file before the node's Rust state is dropped, so
//! dropping a `SpillFile` never touches the file.

use pgrx::pg_sys;
use vexec_core::batch::{Column, PhysType, RowIdx, BATCH_CAPACITY};
use vexec_core::spill::{decode_rows, encode_rows, SpilledBatch};

pub struct SpillFile {
    file: *mut pg_sys::BufFile,
    /// Rows written (for EXPLAIN ANALYZE and to skip empty partitions).
    pub rows: u64,
    pub bytes: u64,
    /// The header (rows, bytes) of the next frame, read but not its rows.
    next_frame: Option<(usize, usize)>,
}

impl SpillFile {
    /// A new temporary file, allocated in the current memory context (the
    /// caller's query context).
    pub unsafe fn create() -> SpillFile {
        // SAFETY: the temporary file belongs to the current resource owner and memory context,
        // which the caller chose (this function's contract).
        SpillFile { file: unsafe { pg_sys::BufFileCreateTemp(false) }, rows: 0, bytes: 0, next_frame: None }
    }

    /// A new file of a shared file set, named `name` within it, that other
    /// processes of the parallel query open once this one has closed it.
    pub unsafe fn create_shared(fileset: *mut pg_sys::SharedFileSet, name: &std::ffi::CStr) -> SpillFile {
        // SAFETY: fileset is the parallel query's shared file set in DSM (caller's contract).
        let file = unsafe { pg_sys::BufFileCreateFileSet(&mut (*fileset).fs, name.as_ptr()) };
        SpillFile { file, rows: 0, bytes: 0, next_frame: None }
    }

    /// The file `name` of a shared file set, for reading; None if no
    /// process created it.
    pub unsafe fn open_shared(
        fileset: *mut pg_sys::SharedFileSet,
        name: &std::ffi::CStr,
    ) -> Option<SpillFile> {
        // SAFETY: as in create_shared.
        let file = unsafe {
            pg_sys::BufFileOpenFileSet(&mut (*fileset).fs, name.as_ptr(), 0 /* O_RDONLY */, true)
        };
        (!file.is_null()).then_some(SpillFile { file, rows: 0, bytes: 0, next_frame: None })
    }

    /// Append rows `rows` of `cols` as one frame (`fixed`: the lengths of
    /// fixed-length by-reference columns, see [`fixed_lengths`]).
    ///
    /// # Safety
    /// As `vexec_core::spill::encode_rows`.
    pub unsafe fn write(
        &mut self,
        cols: &[&Column],
        fixed: &[Option<usize>],
        rows: &[RowIdx],
        scratch: &mut Vec<u8>,
    ) {
        if rows.is_empty() {
            return;
        }
        scratch.clear();
        scratch.extend_from_slice(&(rows.len() as u32).to_le_bytes());
        scratch.extend_from_slice(&[0; 4]);
        // SAFETY: the columns' by-reference values among rows are plain (write's contract).
        unsafe { encode_rows(cols, fixed, rows, scratch) };
        let body = (scratch.len() - 8) as u32;
        scratch[4..8].copy_from_slice(&body.to_le_bytes());
        // SAFETY: self.file is open; scratch holds scratch.len() bytes.
        unsafe { pg_sys::BufFileWrite(self.file, scratch.as_ptr().cast(), scratch.len()) };
        self.rows += rows.len() as u64;
        self.bytes += scratch.len() as u64;
    }

    /// Position at the first frame, for reading.
    pub unsafe fn rewind(&mut self) {
        self.next_frame = None;
        // SAFETY: self.file is open.
        if unsafe { pg_sys::BufFileSeek(self.file, 0, 0, libc_seek_set()) } != 0 {
            pgrx::error!("could not rewind a vexec temporary file");
        }
    }

    /// The next rows (None at the end): whole frames, as many as one batch
    /// holds, as columns of `types`.
    pub unsafe fn read(
        &mut self,
        types: &[PhysType],
        fixed: &[Option<usize>],
        buf: &mut Vec<u8>,
    ) -> Option<SpilledBatch> {
        // Frames written from the parts of many batches are small (a
        // sixteenth of a batch per partition, less at each level); read as
        // they are, a hash join would spend a batch's row ids on each.
        buf.clear();
        let mut rows = 0;
        loop {
            // SAFETY: self.file is open.
            let Some((n, len)) = self.next_frame.take().or_else(|| unsafe { self.read_header() }) else {
                break;
            };
            if rows > 0 && rows + n > BATCH_CAPACITY {
                self.next_frame = Some((n, len));
                break;
            }
            let start = buf.len();
            buf.resize(start + len, 0);
            // SAFETY: self.file is open and buf has len bytes of room from start.
            unsafe { pg_sys::BufFileReadExact(self.file, buf[start..].as_mut_ptr().cast(), len) };
            rows += n;
        }
        if rows == 0 {
            return None;
        }
        let mut pos = 0;
        match decode_rows(types, fixed, buf, &mut pos, rows) {
            Ok(b) if b.len == rows && pos == buf.len() => Some(b),
            _ => corrupt(),
        }
    }

    /// The next frame's (rows, bytes), None at the end of the file.
    unsafe fn read_header(&mut self) -> Option<(usize, usize)> {
        let mut head = [0u8; 8];
        // SAFETY: self.file is open and head has 8 bytes.
        let n = unsafe { pg_sys::BufFileReadMaybeEOF(self.file, head.as_mut_ptr().cast(), 8, true) };
        if n == 0 {
            return None;
        }
        if n != 8 {
            corrupt();
        }
        let rows = u32::from_le_bytes(head[0..4].try_into().unwrap()) as usize;
        let len = u32::from_le_bytes(head[4..8].try_into().unwrap()) as usize;
        if rows == 0 || rows > BATCH_CAPACITY {
            corrupt();
        }
        Some((rows, len))
    }

    pub unsafe fn close(self) {
        // SAFETY: self.file is open and closed once (close takes self).
        unsafe { pg_sys::BufFileClose(self.file) };
    }
}

/// The spill format's fixed lengths of columns whose typlens are `by_ref`
/// (`ChildInput::by_ref`: None for by-value, -1 for varlenas).
pub fn fixed_lengths(by_ref: &[Option<i16>]) -> Vec<Option<usize>> {
    by_ref.iter().map(|t| t.filter(|&len| len > 0).map(|len| len as usize)).collect()
}

fn corrupt() -> ! {
    pgrx::ereport!(ERROR, pgrx::PgSqlErrorCode::ERRCODE_DATA_CORRUPTED, "a vexec temporary file is damaged");
    #[allow(unreachable_code)]
    loop {}
}

const fn libc_seek_set() -> i32 {
    0 // SEEK_SET
}
