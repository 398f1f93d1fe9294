//! Builds the C runtime (runtime/) into a shared object that the checker embeds, so that an
//! installed `smc-run` is self-contained, and names the build (`SMC_BUILD_ID`: a hash of the
//! sources), so that the checker refuses an engine library (runtime/engine) of another build.
use std::path::{Path, PathBuf};
use std::process::Command;

/// What the runtime and the SV-COMP link library are built from (besides targets/ARCH).
const RUNTIME_SOURCES: &[&str] = &[
    "runtime/smc_rt.c",
    "runtime/snapshot.c",
    "runtime/snapshot.h",
    "runtime/channel.h",
    "runtime/smc_verifier.h",
    "runtime/smc_verifier.c",
];

/// FNV-1a over the paths and contents of the files under `dirs`, in path order.
fn hash_sources(dirs: &[&str]) -> u64 {
    fn walk(dir: &Path, files: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, files);
            } else {
                files.push(p);
            }
        }
    }
    let mut files = Vec::new();
    for d in dirs {
        let p = Path::new(d);
        if p.is_file() {
            files.push(p.to_path_buf());
        } else {
            walk(p, &mut files);
        }
    }
    files.sort();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for f in files {
        let bytes = std::fs::read(&f).unwrap_or_default();
        for b in f.to_string_lossy().bytes().chain(bytes) {
            h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

fn main() {
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap();
    for d in ["src", "runtime", "targets"] {
        println!("cargo:rerun-if-changed={d}");
    }
    println!("cargo:rerun-if-changed=Cargo.toml");
    let build = hash_sources(&["src", "runtime", "targets", "Cargo.toml"]);
    println!("cargo:rustc-env=SMC_BUILD_ID={build:016x}");
    // The runtime is compiled again only when its own sources change (this script runs on
    // every change of src/ for the build id).
    let mut rt_files = RUNTIME_SOURCES.to_vec();
    let arch_sources = format!("targets/{arch}");
    rt_files.push(&arch_sources);
    let rt_sources = hash_sources(&rt_files);
    let stamp = out.join("runtime.hash");
    if std::fs::read_to_string(&stamp).ok() == Some(format!("{rt_sources:016x}"))
        && out.join("libsmc_rt.so").exists()
        && out.join("libsmc_verifier.so").exists()
    {
        return;
    }
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
    std::fs::write(&stamp, format!("{rt_sources:016x}")).unwrap();
}
