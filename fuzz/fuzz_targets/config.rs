#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cutline_fuzz::config(data));
