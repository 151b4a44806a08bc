//! Bounded reads of the files cutline reads whole (prompt configs, session
//! files). A file over the cap is an error that names its size, so a stray
//! huge file, or a link to `/proc/self/pagemap` or `/dev/zero`, can never be
//! read until the machine runs out of memory.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// The environment variable that sets the cap, in MiB.
pub const MAX_FILE_ENV: &str = "CUTLINE_MAX_FILE_MIB";

/// The cap when [`MAX_FILE_ENV`] is unset or not a positive number: 64 MiB.
pub const DEFAULT_MAX_FILE_MIB: u64 = 64;

/// The cap in bytes (from [`MAX_FILE_ENV`], else [`DEFAULT_MAX_FILE_MIB`]).
pub fn max_file_bytes() -> u64 {
    let mib = std::env::var(MAX_FILE_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|&n| n > 0)
        .unwrap_or(DEFAULT_MAX_FILE_MIB);
    mib.saturating_mul(1 << 20)
}

fn too_large(what: &str, cap: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::FileTooLarge,
        format!(
            "{what}, over the {} MiB limit for one file (set {MAX_FILE_ENV} to raise it)",
            cap >> 20
        ),
    )
}

/// Open `path` for a whole read: a regular file (after links) no larger
/// than the cap. Returns the file and the cap; read it through
/// `Read::take`, since some files (`/proc`) report no size.
pub fn open(path: &Path) -> io::Result<(File, u64)> {
    let file = File::open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file (a device, pipe or directory is never read)",
        ));
    }
    let cap = max_file_bytes();
    if meta.len() > cap {
        return Err(too_large(&format!("{} bytes", meta.len()), cap));
    }
    Ok((file, cap))
}

/// The whole of `path`, or an error when it is over the cap (see [`open`]).
pub fn read(path: &Path) -> io::Result<Vec<u8>> {
    let (mut file, cap) = open(path)?;
    let mut bytes = Vec::new();
    (&mut file).take(cap).read_to_end(&mut bytes)?;
    // At the cap: one more read says whether there is more (8 bytes, since
    // some `/proc` files refuse smaller reads).
    if bytes.len() as u64 == cap && !matches!(file.read(&mut [0u8; 8]), Ok(0)) {
        return Err(over_cap(cap));
    }
    Ok(bytes)
}

/// The error for a reader that went past the cap while streaming.
pub fn over_cap(cap: u64) -> io::Error {
    too_large("more bytes than its size says", cap)
}
