//! The program under test as a file: ELF checks, the code to decode, symbols and source lines.

use std::path::{Path, PathBuf};

use goblin::elf::{header, program_header, section_header, sym, Elf};

mod landing_pads;

/// A function or data symbol, at its file virtual address.
#[derive(Clone, Debug)]
pub struct Symbol {
    pub addr: u64,
    pub size: u64,
    pub name: String,
}

impl Symbol {
    /// Where it lies, [start, end); `None` for a symbol without a size.
    fn span(&self) -> Option<(u64, u64)> {
        (self.size > 0).then(|| (self.addr, self.addr.saturating_add(self.size)))
    }
}

/// An executable section to instrument.
#[derive(Clone, Debug)]
pub struct CodeSection {
    pub name: String,
    pub addr: u64,
    pub bytes: Vec<u8>,
    /// The functions in it (start, end; sorted) whose code the decoder may patch across
    /// instruction boundaries: from the symbol table, none in a program whose exception
    /// tables could not be read (a landing pad is reached by no branch).
    pub functions: Vec<(u64, u64)>,
    /// Where the unwinder enters its functions (sorted): the landing pads of the program's
    /// exception tables.
    pub landing_pads: Vec<u64>,
    /// Every function of the symbol table in it (start, end; sorted), exception tables or
    /// not: where a function keeps its frame pointer, its frame's accesses are its thread's
    /// own, as stack-pointer ones are.
    pub symbols: Vec<(u64, u64)>,
    /// The functions in it (start, end) known to return at most one word
    /// ([`ONE_WORD_RETURNS`]).
    pub one_word_returns: Vec<(u64, u64)>,
}

/// Library functions known to return at most one word, by demangled name: their callers read
/// rax alone (rdx, the ABI's second return register, is garbage to them), which the binary
/// does not say. Rust std's futex lock slow paths, which spin and return `()`.
const ONE_WORD_RETURNS: [&str; 3] = [
    "<std::sys::sync::mutex::futex::Mutex>::lock_contended",
    "<std::sys::sync::rwlock::futex::RwLock>::read_contended",
    "<std::sys::sync::rwlock::futex::RwLock>::write_contended",
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arch {
    X86_64,
    Ppc64le,
}

impl Arch {
    /// The name `--arch` and `--json` use.
    pub fn name(self) -> &'static str {
        match self {
            Arch::X86_64 => "x86_64",
            Arch::Ppc64le => "ppc64le",
        }
    }
}

pub struct Program {
    pub path: PathBuf,
    pub arch: Arch,
    pub pie: bool,
    pub code: Vec<CodeSection>,
    /// What this build of the program is: `build-id:HEX` (the linker's GNU build id) or, for a
    /// binary linked without one, `fnv64:HEX` of its bytes. Saved with a schedule, so that a
    /// replay against another build says so instead of diverging.
    pub identity: String,
    /// Whether the file has DWARF line tables (`-g`): without them reports have no file:line.
    pub has_line_info: bool,
    /// The shared libraries it needs whose code the check does not see ([`unseen_library`]).
    pub unseen_libraries: Vec<String>,
    functions: Vec<Symbol>,
    objects: Vec<Symbol>,
    lines: Option<addr2line::Loader>,
}

/// Whether a needed shared library (its `DT_NEEDED` name) is code whose accesses to shared
/// memory the check does not see: only the executable is instrumented. The C library's
/// threads, synchronisation, heap and memory functions are modelled by interposition, and the
/// C++ and Rust runtimes' own synchronisation goes through them; any other library (the
/// program's own, or libatomic, whose wide atomics take a lock of its own) is not looked into.
pub fn unseen_library(name: &str) -> bool {
    const MODELLED: &[&str] = &[
        "libc.so",
        "libm.so",
        "libpthread.so",
        "libdl.so",
        "librt.so",
        "libgcc_s.so",
        "libstdc++.so",
        "ld-linux",
        "ld64.so",
    ];
    !MODELLED.iter().any(|m| name.starts_with(m))
}

/// Why a file cannot be checked; the message is one line for the user.
#[derive(Debug)]
pub struct InputError(pub String);

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn bad(path: &Path, why: &str) -> InputError {
    InputError(format!("{}: {}", path.display(), why))
}

/// The instruction set of the executable at `path`, if it is a 64-bit little-endian ELF file of
/// one this build supports (a glance at its header; [`Program::load`] says what is wrong).
pub fn arch_of(path: &Path) -> Option<Arch> {
    use std::io::Read;
    let mut head = [0u8; 20];
    std::fs::File::open(path).ok()?.read_exact(&mut head).ok()?;
    let machine = u16::from_le_bytes([head[18], head[19]]);
    match (&head[..4], head[4], head[5], machine) {
        (b"\x7fELF", 2, 1, header::EM_X86_64) => Some(Arch::X86_64),
        (b"\x7fELF", 2, 1, header::EM_PPC64) => Some(Arch::Ppc64le),
        _ => None,
    }
}

impl Program {
    pub fn load(path: &Path) -> Result<Program, InputError> {
        let meta = std::fs::metadata(path)
            .map_err(|e| bad(path, &format!("cannot open: {}", io_reason(&e))))?;
        if meta.is_dir() {
            return Err(bad(path, "is a directory, not a program"));
        }
        let data = std::fs::read(path)
            .map_err(|e| bad(path, &format!("cannot read: {}", io_reason(&e))))?;
        let mut program = Program::parse(path, &data)?;
        program.lines = addr2line::Loader::new(path).ok();
        Ok(program)
    }

    /// Check and read the bytes of an executable named `path` (for messages). Everything but
    /// the source lines, which need the file itself.
    pub fn parse(path: &Path, data: &[u8]) -> Result<Program, InputError> {
        if data.starts_with(b"#!") {
            return Err(bad(path, "is a script, not a compiled program"));
        }
        if !data.starts_with(b"\x7fELF") {
            return Err(bad(path, "is not an ELF executable"));
        }
        let elf = Elf::parse(data).map_err(|e| bad(path, &format!("malformed ELF file ({e})")))?;
        if !elf.is_64 {
            return Err(bad(
                path,
                "is a 32-bit program; only 64-bit x86-64 and ppc64le programs are supported",
            ));
        }
        let arch = match (elf.header.e_machine, elf.little_endian) {
            (header::EM_X86_64, true) => Arch::X86_64,
            (header::EM_PPC64, true) => Arch::Ppc64le,
            (header::EM_PPC64, false) => {
                return Err(bad(
                    path,
                    "is a big-endian ppc64 program; supported: x86-64 and ppc64le",
                ))
            }
            (m, _) => {
                return Err(bad(
                    path,
                    &format!(
                        "is built for {}; supported: x86-64 and ppc64le",
                        header::machine_to_str(m)
                    ),
                ))
            }
        };
        let interp = elf
            .program_headers
            .iter()
            .any(|p| p.p_type == program_header::PT_INTERP);
        let pie = match elf.header.e_type {
            header::ET_EXEC => false,
            header::ET_DYN if interp => true,
            header::ET_DYN => return Err(bad(path, "is a shared library, not an executable")),
            _ => {
                return Err(bad(
                    path,
                    "is not an executable (ELF type is neither EXEC nor DYN)",
                ))
            }
        };
        if !interp {
            return Err(bad(
                path,
                "is statically linked; smc-run needs a dynamically linked program (glibc)",
            ));
        }
        // pthread_create, or libstdc++'s std::thread start (which calls it)
        let creates_threads = elf.dynsyms.iter().any(|s| {
            s.st_shndx == section_header::SHN_UNDEF as usize
                && elf.dynstrtab.get_at(s.st_name).is_some_and(|n| {
                    n == "pthread_create" || n.starts_with("_ZNSt6thread15_M_start_thread")
                })
        });
        if !creates_threads {
            return Err(bad(
                path,
                "does not create threads (no pthread_create or std::thread); there is nothing \
                 to interleave",
            ));
        }
        let mut code = Vec::new();
        for sh in &elf.section_headers {
            let name = elf.shdr_strtab.get_at(sh.sh_name).unwrap_or("");
            let exec = sh.sh_flags & section_header::SHF_EXECINSTR as u64 != 0;
            // PLT stubs and the init/fini glue are linker code, not the program's.
            let glue =
                name.starts_with(".plt") || name == ".init" || name == ".fini" || name == ".glink";
            if !exec || glue || sh.sh_type != section_header::SHT_PROGBITS {
                continue;
            }
            let range = sh
                .file_range()
                .ok_or_else(|| bad(path, "malformed section table"))?;
            let bytes = data
                .get(range)
                .ok_or_else(|| bad(path, "truncated file"))?
                .to_vec();
            code.push(CodeSection {
                name: name.to_string(),
                addr: sh.sh_addr,
                bytes,
                functions: Vec::new(),
                landing_pads: Vec::new(),
                symbols: Vec::new(),
                one_word_returns: Vec::new(),
            });
        }
        if code.is_empty() {
            return Err(bad(
                path,
                "has no code sections (section headers stripped?)",
            ));
        }
        let mut functions = Vec::new();
        let mut objects = Vec::new();
        for (syms, strtab) in [(&elf.syms, &elf.strtab), (&elf.dynsyms, &elf.dynstrtab)] {
            for s in syms.iter() {
                if s.st_value == 0 || s.st_shndx == section_header::SHN_UNDEF as usize {
                    continue;
                }
                let Some(name) = strtab.get_at(s.st_name).filter(|n| !n.is_empty()) else {
                    continue;
                };
                let symbol = Symbol {
                    addr: s.st_value,
                    size: s.st_size,
                    name: name.to_string(),
                };
                match s.st_type() {
                    sym::STT_FUNC => functions.push(symbol),
                    sym::STT_OBJECT | sym::STT_TLS => objects.push(symbol),
                    _ => {}
                }
            }
        }
        for v in [&mut functions, &mut objects] {
            one_name_per_address(v);
        }
        for c in &mut code {
            c.one_word_returns = functions
                .iter()
                .filter(|f| f.name.contains("_contended"))
                .filter(|f| ONE_WORD_RETURNS.contains(&demangled(&f.name).as_str()))
                .filter_map(|f| Some((f.addr, f.addr.checked_add(f.size)?)))
                .filter(|&(lo, _)| lo >= c.addr && lo - c.addr < c.bytes.len() as u64)
                .collect();
        }
        let landing_pads = landing_pads::landing_pads(&elf, data);
        for c in &mut code {
            // (a malformed file's addresses and sizes may add up past the end of memory)
            let end = c.addr.saturating_add(c.bytes.len() as u64);
            c.symbols = functions
                .iter()
                .filter_map(|f| Some((f.addr, f.addr.checked_add(f.size)?)))
                .filter(|&(lo, hi)| hi > lo && lo >= c.addr && hi <= end)
                .collect();
            if let Some(pads) = &landing_pads {
                c.functions = c.symbols.clone();
                c.landing_pads = pads
                    .iter()
                    .copied()
                    .filter(|&a| a >= c.addr && a < end)
                    .collect();
            }
        }
        let has_line_info = elf
            .section_headers
            .iter()
            .any(|sh| elf.shdr_strtab.get_at(sh.sh_name) == Some(".debug_line"));
        let unseen_libraries = (elf.libraries.iter())
            .filter(|l| unseen_library(l))
            .map(|l| l.to_string())
            .collect();
        Ok(Program {
            path: path.to_path_buf(),
            arch,
            pie,
            code,
            identity: identity(&elf, data),
            has_line_info,
            unseen_libraries,
            functions,
            objects,
            lines: None,
        })
    }

    fn lookup(list: &[Symbol], addr: u64, allow_past_end: bool) -> Option<(&Symbol, u64)> {
        let i = list.partition_point(|s| s.addr <= addr).checked_sub(1)?;
        let s = &list[i];
        let off = addr - s.addr;
        (off < s.size.max(1) || allow_past_end && off < 4096).then_some((s, off))
    }

    /// `function+0x12` for a code address (file virtual address), demangled.
    pub fn function_at(&self, addr: u64) -> Option<String> {
        let (s, off) = Self::lookup(&self.functions, addr, false)?;
        Some(if off == 0 {
            demangled(&s.name)
        } else {
            format!("{}+{:#x}", demangled(&s.name), off)
        })
    }

    /// The name of the function starting at `addr`.
    /// The functions the program defines whose name starts with `prefix`: (start, end).
    pub fn functions_prefixed(&self, prefix: &str) -> Vec<(u64, u64)> {
        self.functions
            .iter()
            .filter(|f| f.name.starts_with(prefix))
            .filter_map(Symbol::span)
            .collect()
    }

    /// The address of the function the program defines under `name`.
    pub fn function_address(&self, name: &str) -> Option<u64> {
        self.functions
            .iter()
            .find(|f| f.name == name)
            .map(|f| f.addr)
    }

    /// The address of the function the program defines under one of `names`, demangled.
    pub fn function_address_demangled(&self, names: &[&str]) -> Option<u64> {
        self.function_demangled(names).map(|f| f.addr)
    }

    /// The function the program defines under one of `names`, demangled: (start, end).
    pub fn function_span_demangled(&self, names: &[&str]) -> Option<(u64, u64)> {
        self.function_demangled(names)?.span()
    }

    fn function_demangled(&self, names: &[&str]) -> Option<&Symbol> {
        // (a mangled name holds each identifier as it is: only those are demangled)
        self.functions
            .iter()
            .filter(|f| {
                names
                    .iter()
                    .any(|n| f.name.contains(n.rsplit("::").next().unwrap_or(n)))
            })
            .find(|f| names.contains(&demangled(&f.name).as_str()))
    }

    /// The name of the function starting at `addr`, demangled.
    pub fn function_named_at(&self, addr: u64) -> Option<String> {
        Self::lookup(&self.functions, addr, false)
            .filter(|(_, off)| *off == 0)
            .map(|(s, _)| demangled(&s.name))
    }

    /// `counter` or `table+16` for a data address (file virtual address), demangled.
    pub fn object_at(&self, addr: u64) -> Option<String> {
        let (s, off) = Self::lookup(&self.objects, addr, false)?;
        Some(if off == 0 {
            demangled(&s.name)
        } else {
            format!("{}+{}", demangled(&s.name), off)
        })
    }

    /// `file.c:12` for a code address, when the program has DWARF line information.
    /// The source file (as recorded in DWARF) and line of an instruction.
    pub fn source_at(&self, addr: u64) -> Option<(PathBuf, u32)> {
        let loc = self.lines.as_ref()?.find_location(addr).ok()??;
        Some((PathBuf::from(loc.file?), loc.line?))
    }

    pub fn line_at(&self, addr: u64) -> Option<String> {
        let loc = self.lines.as_ref()?.find_location(addr).ok()??;
        let file = loc.file?;
        let short = Path::new(file)
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or(file.to_string());
        Some(match loc.line {
            Some(l) => format!("{short}:{l}"),
            None => short,
        })
    }
}

/// Sort by address and keep one symbol per address: one with a size rather than a marker
/// (`stdout`, copied into the program's .bss, shares its address with `__TMC_END__`), then
/// the shortest name (`stdout` rather than `stdout@GLIBC_2.2.5`), then the first by name.
fn one_name_per_address(v: &mut Vec<Symbol>) {
    v.sort_by(|a, b| {
        (a.addr, a.size == 0, a.name.len(), &a.name).cmp(&(
            b.addr,
            b.size == 0,
            b.name.len(),
            &b.name,
        ))
    });
    v.dedup_by(|a, b| a.addr == b.addr);
}

fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".to_string(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        _ => e.to_string(),
    }
}

/// `build-id:HEX` from the GNU build-id note, else `fnv64:HEX` of the whole file.
fn identity(elf: &Elf, data: &[u8]) -> String {
    let build_id = elf
        .iter_note_sections(data, Some(".note.gnu.build-id"))
        .and_then(|notes| {
            // the first malformed note ends the walk (goblin's iterator may yield the same
            // error forever); a real build-id note comes first in its section
            notes
                .map_while(Result::ok)
                .take(16)
                .find(|n| n.n_type == goblin::elf::note::NT_GNU_BUILD_ID && !n.desc.is_empty())
                .map(|n| {
                    n.desc
                        .iter()
                        .map(|b| format!("{b:02x}"))
                        .collect::<String>()
                })
        });
    match build_id {
        Some(hex) => format!("build-id:{hex}"),
        None => format!("fnv64:{:016x}", fnv64(data)),
    }
}

/// FNV-1a, 64 bits: a fingerprint of a file, not a defence against forgery.
pub fn fnv64(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A symbol as people read it: C++ (Itanium) and Rust (legacy and v0) names demangled, Rust's
/// hash suffix left out; others as they are (only mangled names are tried: the C++ demangler
/// reads a C global named `x` as the type `long long`).
pub fn demangled(name: &str) -> String {
    if !(name.starts_with("_Z") || name.starts_with("_R")) {
        return name.to_string();
    }
    addr2line::demangle_auto(std::borrow::Cow::from(name), None).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_is_named_by_its_sized_symbol_with_the_plainest_name() {
        let sym = |addr, size, name: &str| Symbol {
            addr,
            size,
            name: name.to_string(),
        };
        let mut v = vec![
            sym(0x4040, 8, "stdout@GLIBC_2.2.5"),
            sym(0x4040, 0, "__TMC_END__"),
            sym(0x4040, 8, "stdout"),
            sym(0x4010, 4, "counter"),
        ];
        one_name_per_address(&mut v);
        let names: Vec<&str> = v.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["counter", "stdout"]);
    }

    #[test]
    fn cpp_and_rust_names_are_demangled() {
        assert_eq!(demangled("main"), "main");
        // C globals that read as Itanium type codes stay as they are
        assert_eq!(demangled("x"), "x");
        assert_eq!(demangled("y"), "y");
        assert_eq!(demangled("_ZNSt6thread4joinEv"), "std::thread::join()");
        assert_eq!(
            demangled("_ZN3std2rt10lang_start17h0123456789abcdefE"),
            "std::rt::lang_start"
        );
        assert_eq!(demangled("_RNvC6_123foo3bar"), "123foo::bar");
    }
}
