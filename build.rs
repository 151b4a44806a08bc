//! The message catalogues are compiled into the binary by rust-i18n's
//! macro, which cargo does not know reads them: rebuild when they change.

fn main() {
    println!("cargo:rerun-if-changed=locales");
}
