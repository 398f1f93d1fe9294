//! Builds the C runtime (runtime/) into a shared object that the checker embeds, so that an
//! installed `smc-run` is self-contained.
use std::path::PathBuf;
use std::process::Command;

fn main() {
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap();
    for f in [
        "runtime/smc_rt.c",
        "runtime/snapshot.c",
        "runtime/snapshot.h",
        "runtime/channel.h",
        "runtime/smc_verifier.h",
        "runtime/smc_verifier.c",
    ] {
        println!("cargo:rerun-if-changed={f}");
    }
    println!("cargo:rerun-if-changed=targets/{arch}/arch.h");
    println!("cargo:rerun-if-changed=targets/{arch}/hook.h");
    println!("cargo:rerun-if-changed=targets/{arch}/coro.h");
    let compiler = cc::Build::new().get_compiler();
    let run = |args: &[&str], what: &str| {
        let status = Command::new(compiler.path())
            .args(args)
            .status()
            .unwrap_or_else(|e| panic!("cannot run the C compiler for {what}: {e}"));
        assert!(status.success(), "building {what} failed");
    };
    let arch_dir = format!("-Itargets/{arch}");
    let rt = out.join("libsmc_rt.so");
    run(
        &[
            "-shared",
            "-fPIC",
            "-O2",
            "-g",
            "-std=gnu11",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-fvisibility=hidden",
            "-ftls-model=initial-exec",
            "-fno-stack-protector",
            "-Iruntime",
            &arch_dir,
            "-o",
            rt.to_str().unwrap(),
            "runtime/smc_rt.c",
            "runtime/snapshot.c",
            "-ldl",
            "-lpthread",
        ],
        "the runtime",
    );
    let stub = out.join("libsmc_verifier.so");
    run(
        &[
            "-shared",
            "-fPIC",
            "-O2",
            "-Iruntime",
            "-o",
            stub.to_str().unwrap(),
            "runtime/smc_verifier.c",
        ],
        "the SV-COMP link library",
    );
}
