//! Where the unwinder enters functions: the landing pads of C++ and Rust exception tables
//! (`.gcc_except_table`, one language-specific data area per function, found from its frame
//! description in `.eh_frame`). No branch of the code reaches them, so the decoder counts
//! them among branch targets before it patches across instruction boundaries.

use addr2line::gimli::{self, UnwindSection};
use goblin::elf::Elf;

/// Every landing pad of the program's exception tables (sorted), or `None` where a table
/// cannot be read (an encoding this reader does not know): then nothing may be assumed.
/// Empty when the program has no exception tables.
pub fn landing_pads(elf: &Elf, data: &[u8]) -> Option<Vec<u64>> {
    let section = |name: &str| {
        elf.section_headers
            .iter()
            .find(|sh| elf.shdr_strtab.get_at(sh.sh_name) == Some(name))
    };
    let Some(tables) = section(".gcc_except_table") else {
        return Some(Vec::new());
    };
    let tables = Area {
        addr: tables.sh_addr,
        bytes: data.get(tables.file_range()?)?,
    };
    let frames = section(".eh_frame")?;
    let frames_bytes = data.get(frames.file_range()?)?;
    let eh_frame = gimli::EhFrame::new(frames_bytes, gimli::LittleEndian);
    let mut bases = gimli::BaseAddresses::default().set_eh_frame(frames.sh_addr);
    if let Some(text) = section(".text") {
        bases = bases.set_text(text.sh_addr);
    }
    if let Some(got) = section(".got") {
        bases = bases.set_got(got.sh_addr);
    }
    let mut pads = Vec::new();
    let mut entries = eh_frame.entries(&bases);
    while let Some(entry) = entries.next().ok()? {
        let gimli::CieOrFde::Fde(partial) = entry else {
            continue;
        };
        let fde = partial
            .parse(|section, bases, offset| section.cie_from_offset(bases, offset))
            .ok()?;
        match fde.lsda() {
            None => {}
            Some(gimli::Pointer::Direct(lsda)) => {
                tables.landing_pads(lsda, fde.initial_address(), &mut pads)?
            }
            Some(gimli::Pointer::Indirect(_)) => return None,
        }
    }
    pads.sort_unstable();
    pads.dedup();
    Some(pads)
}

/// `.gcc_except_table`'s bytes and where they are loaded.
struct Area<'a> {
    addr: u64,
    bytes: &'a [u8],
}

const OMIT: u8 = 0xff;

impl Area<'_> {
    /// Adds the landing pads of the data area at `lsda`, of the function at `start`.
    fn landing_pads(&self, lsda: u64, start: u64, pads: &mut Vec<u64>) -> Option<()> {
        let mut at = usize::try_from(lsda.checked_sub(self.addr)?).ok()?;
        let lp_encoding = self.byte(&mut at)?;
        let lp_start = match lp_encoding {
            OMIT => start,
            e => self.encoded(e, &mut at)?,
        };
        if self.byte(&mut at)? != OMIT {
            self.uleb(&mut at)?; // where the type table is
        }
        let call_site_encoding = self.byte(&mut at)?;
        let length = self.uleb(&mut at)?;
        let end = at.checked_add(usize::try_from(length).ok()?)?;
        if end > self.bytes.len() {
            return None;
        }
        while at < end {
            let _start = self.encoded(call_site_encoding, &mut at)?;
            let _length = self.encoded(call_site_encoding, &mut at)?;
            let pad = self.encoded(call_site_encoding, &mut at)?;
            self.uleb(&mut at)?; // the action
            if pad != 0 {
                pads.push(lp_start.checked_add(pad)?);
            }
        }
        (at == end).then_some(())
    }

    fn byte(&self, at: &mut usize) -> Option<u8> {
        let b = *self.bytes.get(*at)?;
        *at += 1;
        Some(b)
    }

    fn uleb(&self, at: &mut usize) -> Option<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte(at)?;
            value |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    }

    fn sleb(&self, at: &mut usize) -> Option<u64> {
        let mut value = 0u64;
        let mut shift = 0;
        loop {
            let b = self.byte(at)?;
            if shift < 64 {
                value |= u64::from(b & 0x7f) << shift;
            }
            shift += 7;
            if b & 0x80 == 0 {
                if shift < 64 && b & 0x40 != 0 {
                    value |= !0 << shift;
                }
                return Some(value);
            }
            if shift > 70 {
                return None;
            }
        }
    }

    fn fixed<const N: usize>(&self, at: &mut usize) -> Option<[u8; N]> {
        let bytes = self.bytes.get(*at..at.checked_add(N)?)?.try_into().ok()?;
        *at += N;
        Some(bytes)
    }

    /// A value in DWARF exception-header encoding `e`: absolute or relative to where it is
    /// (`None` for any other application, or an indirect one).
    fn encoded(&self, e: u8, at: &mut usize) -> Option<u64> {
        let here = self.addr.checked_add(*at as u64)?;
        let value = match e & 0x0f {
            0x00 | 0x04 => u64::from_le_bytes(self.fixed(at)?),
            0x01 => self.uleb(at)?,
            0x02 => u16::from_le_bytes(self.fixed(at)?).into(),
            0x03 => u32::from_le_bytes(self.fixed(at)?).into(),
            0x09 => self.sleb(at)?,
            0x0a => i16::from_le_bytes(self.fixed(at)?) as u64,
            0x0b => i32::from_le_bytes(self.fixed(at)?) as u64,
            0x0c => i64::from_le_bytes(self.fixed(at)?) as u64,
            _ => return None,
        };
        match e & 0xf0 {
            0x00 => Some(value),
            0x10 => Some(here.wrapping_add(value)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A data area with a landing pad start given, a type table, and uleb128 call sites.
    #[test]
    fn data_areas_give_their_landing_pads() {
        let bytes = [
            0xff, // landing pads relative to the function
            0x9b, 0x05, // a type table 5 bytes on (pcrel sdata4 pointers)
            0x01, // call sites in uleb128
            0x08, // 8 bytes of call sites
            0x00, 0x10, 0x20, 0x00, // [0, 0x10): pad at +0x20, no action
            0x10, 0x04, 0x00, 0x01, // [0x10, 0x14): no pad, action 1
            0, 0, 0, 0, 0, // the type table
        ];
        let area = Area {
            addr: 0x5000,
            bytes: &bytes,
        };
        let mut pads = Vec::new();
        assert_eq!(area.landing_pads(0x5000, 0x1000, &mut pads), Some(()));
        assert_eq!(pads, [0x1020]);
        // an application this reader does not know (data-relative) is refused
        let mut odd = bytes;
        odd[3] = 0x31;
        let area = Area {
            addr: 0x5000,
            bytes: &odd,
        };
        assert_eq!(area.landing_pads(0x5000, 0x1000, &mut Vec::new()), None);
        // a table running past the section is refused
        let area = Area {
            addr: 0x5000,
            bytes: &bytes[..10],
        };
        assert_eq!(area.landing_pads(0x5000, 0x1000, &mut Vec::new()), None);
    }
}
