//! ChampSim instruction traces: binary `input_instr` records of 64 bytes, little endian —
//! `ip` (u64), `is_branch`, `branch_taken` (u8 each), `destination_registers` [u8; 2],
//! `source_registers` [u8; 4], `destination_memory` [u64; 2], `source_memory` [u64; 4] —
//! xz, gzip or plain. Before the caches: loads and stores go through the hierarchy like
//! bulksim's own `L`/`S`.
//!
//! Each record is one instruction. One without memory operands adds to a run of `Compute`,
//! given out every `COMPUTE_CHUNK` instructions so that a long run (or an endless input
//! without memory operands) still advances the core and meets `sim.max_cycles`; one with
//! operands becomes `Load(address)` per nonzero source operand, then `Store(address)` per
//! nonzero destination operand. bulksim's core model counts each such event as an
//! instruction, so an instruction with k memory operands counts k; branches and registers are
//! not modelled (the core has no branch predictor or register dependences). A record of 64
//! zero bytes (no instruction address) is refused: it is what a file of zeros, a sparse hole or
//! `/dev/zero` holds, never an instruction.

use super::{address, open_decompressed, push_compute, whole_address_space};
use crate::error::{Error, Result};
use crate::workload::program::Event;
use crate::workload::source::EventSource;
use std::collections::VecDeque;
use std::io::{BufRead, Read};
use std::path::Path;

/// Bytes of one `input_instr` record.
pub const RECORD_BYTES: usize = 64;

/// The longest run of instructions without memory operands read before it is given out as
/// `Compute`: 4 MiB of records, a few milliseconds of reading, so that the core advances (and
/// `sim.max_cycles` or convert's instruction limit can stop an endless input) while the
/// events stay few. Splitting a run changes no timing: the core takes `Compute(a)` then
/// `Compute(b)` as it takes `Compute(a + b)`.
pub const COMPUTE_CHUNK: u64 = 1 << 16;

/// One decoded `input_instr` record (the fields bulksim uses).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Instr {
    pub ip: u64,
    pub is_branch: bool,
    pub branch_taken: bool,
    pub destination_registers: [u8; 2],
    pub source_registers: [u8; 4],
    pub destination_memory: [u64; 2],
    pub source_memory: [u64; 4],
}

impl Instr {
    pub fn decode(b: &[u8; RECORD_BYTES]) -> Instr {
        let word = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"));
        Instr {
            ip: word(0),
            is_branch: b[8] != 0,
            branch_taken: b[9] != 0,
            destination_registers: [b[10], b[11]],
            source_registers: [b[12], b[13], b[14], b[15]],
            destination_memory: [word(16), word(24)],
            source_memory: [word(32), word(40), word(48), word(56)],
        }
    }

    pub fn encode(&self) -> [u8; RECORD_BYTES] {
        let mut b = [0u8; RECORD_BYTES];
        b[0..8].copy_from_slice(&self.ip.to_le_bytes());
        b[8] = self.is_branch as u8;
        b[9] = self.branch_taken as u8;
        b[10..12].copy_from_slice(&self.destination_registers);
        b[12..16].copy_from_slice(&self.source_registers);
        for (i, a) in self.destination_memory.iter().enumerate() {
            b[16 + 8 * i..24 + 8 * i].copy_from_slice(&a.to_le_bytes());
        }
        for (i, a) in self.source_memory.iter().enumerate() {
            b[32 + 8 * i..40 + 8 * i].copy_from_slice(&a.to_le_bytes());
        }
        b
    }
}

/// Streams a ChampSim trace as events. The record number in errors counts instructions
/// from 1.
pub struct ChampsimReader {
    input: Box<dyn BufRead + Send>,
    name: String,
    record: u64,
    started: bool,
    /// Instructions without memory operands not yet given out as `Compute`.
    compute: u64,
    pending: VecDeque<Event>,
    ended: bool,
}

impl ChampsimReader {
    pub fn open(path: &Path) -> Result<ChampsimReader> {
        let (input, _) = open_decompressed(path)?;
        Ok(ChampsimReader::new(input, &path.display().to_string()))
    }

    pub fn new(input: Box<dyn BufRead + Send>, name: &str) -> ChampsimReader {
        ChampsimReader {
            input,
            name: name.to_string(),
            record: 0,
            started: false,
            compute: 0,
            pending: VecDeque::with_capacity(8),
            ended: false,
        }
    }

    fn error(&self, what: impl std::fmt::Display) -> Error {
        Error::Trace(format!("{}:{}: {what}", self.name, self.record))
    }

    /// The next whole record, None at a clean end of the trace.
    fn next_record(&mut self) -> Result<Option<Instr>> {
        let mut buf = [0u8; RECORD_BYTES];
        let mut got = 0;
        self.record += 1;
        while got < RECORD_BYTES {
            match self.input.read(&mut buf[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.error(crate::workload::lines::read_error(&e))),
            }
        }
        match got {
            0 => {
                // No such record: where the stream is (for errors found at its end) stays
                // the last one.
                self.record -= 1;
                Ok(None)
            }
            RECORD_BYTES if buf == [0; RECORD_BYTES] => Err(self.error(
                "64 zero bytes, not a ChampSim `input_instr` record (it has no instruction \
                 address); a file of zeros?",
            )),
            RECORD_BYTES => Ok(Some(Instr::decode(&buf))),
            n => Err(self.error(format!(
                "record cut short: {n} of {RECORD_BYTES} bytes (a ChampSim `input_instr` \
                 record is 64 bytes; truncated file?)"
            ))),
        }
    }

    /// Reads records until one with memory operands (its events queued after the compute
    /// run before it) or the end (the last compute run queued).
    fn fill(&mut self) -> Result<()> {
        while self.pending.is_empty() && !self.ended {
            let Some(instr) = self.next_record()? else {
                self.ended = true;
                push_compute(&mut self.pending, std::mem::take(&mut self.compute));
                return Ok(());
            };
            let loads = instr.source_memory.iter().filter(|&&a| a != 0);
            let stores = instr.destination_memory.iter().filter(|&&a| a != 0);
            if loads.clone().count() + stores.clone().count() == 0 {
                self.compute += 1;
                if self.compute == COMPUTE_CHUNK {
                    push_compute(&mut self.pending, std::mem::take(&mut self.compute));
                }
                continue;
            }
            let mut events = [None; 6];
            for (slot, (&a, load)) in events
                .iter_mut()
                .zip(loads.map(|a| (a, true)).chain(stores.map(|a| (a, false))))
            {
                let a = address(
                    a,
                    if load {
                        "source memory operand"
                    } else {
                        "destination memory operand"
                    },
                )
                .map_err(|e| self.error(e))?;
                *slot = Some(if load {
                    Event::Load(a)
                } else {
                    Event::Store(a)
                });
            }
            push_compute(&mut self.pending, std::mem::take(&mut self.compute));
            self.pending.extend(events.into_iter().flatten());
        }
        Ok(())
    }
}

impl EventSource for ChampsimReader {
    fn next_event(&mut self) -> Result<Option<Event>> {
        if !self.started {
            self.started = true;
            return Ok(Some(whole_address_space()));
        }
        self.fill()?;
        Ok(self.pending.pop_front())
    }

    fn location(&self) -> String {
        format!("{}:{}", self.name, self.record)
    }

    fn starts_as_child(&self) -> bool {
        false
    }
}

/// Whether `bytes` (the start of a decompressed file) could be ChampSim records: at least
/// one record, each with flag bytes 0 or 1 and none all zero (`/dev/zero` is not a trace).
pub fn looks_like_records(bytes: &[u8]) -> bool {
    bytes.len() >= RECORD_BYTES
        && bytes
            .chunks_exact(RECORD_BYTES)
            .all(|r| r[8] <= 1 && r[9] <= 1 && r.iter().any(|&b| b != 0))
}
