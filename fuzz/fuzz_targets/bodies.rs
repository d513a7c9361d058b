//! The API's request body readers: translate/write parameters (JSON or form),
//! JSON bodies of the other operations, and document uploads (multipart). The
//! first byte picks the reader.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tolk_api::fuzzing;

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: std::sync::OnceLock<tokio::runtime::Runtime> = std::sync::OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime")
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, body)) = data.split_first() else {
        return;
    };
    match pick % 4 {
        0 => drop(fuzzing::params(body, true)),
        1 => drop(fuzzing::params(body, false)),
        2 => drop(fuzzing::json_body(body)),
        _ => {
            let upload = fuzzing::upload(
                "multipart/form-data; boundary=tolkfuzz",
                body.to_vec(),
                1 << 16,
            );
            drop(runtime().block_on(upload));
        }
    }
});
