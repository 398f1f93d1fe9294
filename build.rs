//! Builds what the checker embeds, so that an installed or copied `smc-run` is one
//! self-contained file: the C runtime (runtime/) as a shared object, and the engine library
//! (runtime/engine, a cdylib of this crate, loaded into the program's worker) by a nested
//! cargo. Names the build (`SMC_BUILD_ID`: a hash of the sources), so that the checker refuses
//! an engine library of another build.
use std::path::{Path, PathBuf};
use std::process::Command;

/// What the runtime and the SV-COMP link library are built from (besides targets/ARCH).
const RUNTIME_SOURCES: &[&str] = &[
    "runtime/rt.h",
    "runtime/sys.h",
    "runtime/trap.c",
    "runtime/startup.c",
    "runtime/script.c",
    "runtime/pending.c",
    "runtime/threads.c",
    "runtime/exits.c",
    "runtime/sync.c",
    "runtime/worker.c",
    "runtime/process.c",
    "runtime/heap.c",
    "runtime/memory.c",
    "runtime/snapshot.c",
    "runtime/snapshot.h",
    "runtime/tls.h",
    "runtime/channel.h",
    "runtime/smc_verifier.h",
    "runtime/smc_verifier.c",
];

/// The runtime's C files (the SV-COMP library is built on its own).
fn runtime_c_files() -> impl Iterator<Item = &'static str> {
    RUNTIME_SOURCES
        .iter()
        .copied()
        .filter(|f| f.ends_with(".c") && !f.ends_with("smc_verifier.c"))
}

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

/// Set for the nested cargo that builds the engine library.
const NESTED: &str = "SMC_ENGINE_NESTED";

fn write_if_changed(path: &Path, bytes: &[u8]) {
    if std::fs::read(path).ok().as_deref() != Some(bytes) {
        std::fs::write(path, bytes).unwrap();
    }
}

/// The engine library, built by a nested cargo into a target directory of its own under
/// OUT_DIR (cargo holds the lock of ours), with this build's profile, and copied to
/// OUT_DIR/libsmc_engine.so for `include_bytes!`. Its build shares our jobserver.
fn build_engine(out: &Path) {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("Cargo.toml");
    let profile = std::env::var("PROFILE").unwrap();
    let target_dir = out.join("engine");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(["build", "--locked", "--quiet", "-p", "smc-engine", "--lib"])
        .arg("--manifest-path")
        .arg(&manifest)
        .arg("--target-dir")
        .arg(&target_dir)
        .env(NESTED, "1")
        .env_remove("CARGO_TARGET_DIR");
    // Without debug information: the library is copied into a memfd by every check (16 MB
    // with line tables in release, 35 MB in debug, against 2-3 MB), and a debugger or perf
    // could not find it from there anyway.
    let env_profile = if profile == "release" {
        "RELEASE"
    } else {
        "DEV"
    };
    cmd.env(format!("CARGO_PROFILE_{env_profile}_DEBUG"), "false")
        .env(format!("CARGO_PROFILE_{env_profile}_STRIP"), "debuginfo");
    if profile == "release" {
        cmd.arg("--release");
    }
    let status = cmd
        .status()
        .unwrap_or_else(|e| panic!("cannot run cargo to build the engine library: {e}"));
    assert!(status.success(), "building the engine library failed");
    let built = target_dir.join(&profile).join("libsmc_engine.so");
    let bytes =
        std::fs::read(&built).unwrap_or_else(|e| panic!("cannot read {}: {e}", built.display()));
    write_if_changed(&out.join("libsmc_engine.so"), &bytes);
}

fn main() {
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap();
    for d in ["src", "runtime", "targets"] {
        println!("cargo:rerun-if-changed={d}");
    }
    println!("cargo:rerun-if-changed=Cargo.toml");
    println!("cargo:rerun-if-changed=Cargo.lock");
    println!("cargo:rerun-if-env-changed={NESTED}");
    let build = hash_sources(&["src", "runtime", "targets", "Cargo.toml"]);
    println!("cargo:rustc-env=SMC_BUILD_ID={build:016x}");
    if std::env::var_os(NESTED).is_some() {
        // The nested build of the engine library: it embeds neither the runtime nor itself.
        for f in [
            "libsmc_rt.so",
            "libsmc_verifier.so",
            "libsmc_engine.so",
            "libsmc_rt_ppc64le.so",
            "libsmc_verifier_ppc64le.so",
        ] {
            write_if_changed(&out.join(f), b"");
        }
        return;
    }
    build_engine(&out);
    let compiler = cc::Build::new().get_compiler();
    build_runtime(&out, &arch, compiler.path(), "");
    // The ppc64le runtime, where the cross compiler is (Debian's gcc-powerpc64le-linux-gnu):
    // without it the checker says which packages a ppc64le program needs.
    println!("cargo:rerun-if-env-changed=SMC_PPC64LE_CC");
    let cross = std::env::var("SMC_PPC64LE_CC").unwrap_or_else(|_| PPC64LE_CC.to_string());
    let have_cross = Command::new(&cross)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if have_cross {
        build_runtime(&out, "ppc64le", Path::new(&cross), "_ppc64le");
    } else {
        for f in ["libsmc_rt_ppc64le.so", "libsmc_verifier_ppc64le.so"] {
            write_if_changed(&out.join(f), b"");
        }
        std::fs::remove_file(out.join("runtime_ppc64le.hash")).ok();
    }
}

/// The cross compiler the ppc64le runtime is built with.
const PPC64LE_CC: &str = "powerpc64le-linux-gnu-gcc";

/// The runtime for `arch` (targets/ARCH) and the SV-COMP link library, built with `compiler`
/// into OUT_DIR/libsmc_rt{suffix}.so and libsmc_verifier{suffix}.so; again only when their
/// own sources changed (this script runs on every change of src/ for the build id).
fn build_runtime(out: &Path, arch: &str, compiler: &Path, suffix: &str) {
    let mut rt_files = RUNTIME_SOURCES.to_vec();
    let arch_sources = format!("targets/{arch}");
    rt_files.push(&arch_sources);
    let rt_sources = hash_sources(&rt_files);
    let stamp = out.join(format!("runtime{suffix}.hash"));
    let rt = out.join(format!("libsmc_rt{suffix}.so"));
    let stub = out.join(format!("libsmc_verifier{suffix}.so"));
    let built = |p: &Path| std::fs::metadata(p).is_ok_and(|m| m.len() > 0);
    if std::fs::read_to_string(&stamp).ok() == Some(format!("{rt_sources:016x}"))
        && built(&rt)
        && built(&stub)
    {
        return;
    }
    fn run(compiler: &Path, args: &[&str], what: &str) {
        let status = Command::new(compiler)
            .args(args)
            .status()
            .unwrap_or_else(|e| panic!("cannot run the C compiler for {what}: {e}"));
        assert!(status.success(), "building {what} failed");
    }
    let arch_dir = format!("-Itargets/{arch}");
    run(
        compiler,
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
        ]
        .iter()
        .copied()
        .chain(runtime_c_files().map(|f| -> &str { f }))
        .chain(["-ldl", "-lpthread", "-lrt"])
        .collect::<Vec<&str>>(),
        &format!("the {arch} runtime"),
    );
    run(
        compiler,
        &[
            "-shared",
            "-fPIC",
            "-O2",
            "-Iruntime",
            "-o",
            stub.to_str().unwrap(),
            "runtime/smc_verifier.c",
        ],
        &format!("the {arch} SV-COMP link library"),
    );
    std::fs::write(&stamp, format!("{rt_sources:016x}")).unwrap();
}
