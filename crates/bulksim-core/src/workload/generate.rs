//! Synthetic request traces: `stream` (consecutive lines), `random` (uniform lines over the
//! footprint), `pagecopy` (read every line of a random 4 KB page, then write every line of
//! another, as a CPU memcpy would). Each request is a write with probability
//! `write_fraction` (pagecopy fixes its own mix). Requests are `interval` cycles apart (0: all
//! due at cycle 0, i.e. as fast as the controller accepts). Same options and seed, same trace.

use super::trace::{RequestSource, TraceRecord};
use crate::error::{Error, Result};
use crate::request::RequestKind;
use crate::rng::SplitMix64;
use std::io::Write;
use std::str::FromStr;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    Stream,
    Random,
    PageCopy,
}

impl Pattern {
    pub const NAMES: &'static [&'static str] = &["stream", "random", "pagecopy"];
}

impl FromStr for Pattern {
    type Err = Error;
    fn from_str(s: &str) -> Result<Pattern> {
        match s {
            "stream" => Ok(Pattern::Stream),
            "random" => Ok(Pattern::Random),
            "pagecopy" => Ok(Pattern::PageCopy),
            _ => Err(Error::Config(format!(
                "pattern '{s}' is not known; valid: {}",
                Pattern::NAMES.join(", ")
            ))),
        }
    }
}

#[derive(Clone, Debug)]
pub struct GenOptions {
    pub pattern: Pattern,
    pub requests: u64,
    /// Cycles between consecutive requests.
    pub interval: u64,
    pub write_fraction: f64,
    /// Bytes of address space touched, from address 0 (rounded down to whole 4 KB pages).
    pub footprint: u64,
    pub seed: u64,
}

const LINE: u64 = 64;
const PAGE: u64 = 4096;

pub struct Generator {
    opts: GenOptions,
    rng: SplitMix64,
    index: u64,
    copy_src: u64,
    copy_dst: u64,
}

impl Generator {
    pub fn new(opts: GenOptions) -> Result<Generator> {
        if opts.footprint < PAGE {
            return Err(Error::Config(format!(
                "footprint: {} bytes is below one 4096-byte page",
                opts.footprint
            )));
        }
        if !(0.0..=1.0).contains(&opts.write_fraction) {
            return Err(Error::Config(format!(
                "write_fraction: {} is not a fraction in 0..=1",
                opts.write_fraction
            )));
        }
        // The last request's cycle must be a number: it would wrap and come out early.
        if opts
            .requests
            .saturating_sub(1)
            .checked_mul(opts.interval)
            .is_none()
        {
            return Err(Error::Config(format!(
                "interval: {} requests {} cycles apart pass cycle 2^64 - 1",
                opts.requests, opts.interval
            )));
        }
        let rng = SplitMix64::new(opts.seed);
        Ok(Generator {
            opts,
            rng,
            index: 0,
            copy_src: 0,
            copy_dst: 0,
        })
    }

    fn kind(&mut self) -> RequestKind {
        if self.opts.write_fraction > 0.0 && self.rng.unit() < self.opts.write_fraction {
            RequestKind::Write
        } else {
            RequestKind::Read
        }
    }

    /// Writes the whole trace in the native format.
    pub fn write_native(mut self, out: &mut impl Write) -> Result<()> {
        let io = |e: std::io::Error| Error::Io(format!("writing trace: {e}"));
        while let Some(r) = self.next_request()? {
            let (kind, addr) = r.as_access().expect("generators make reads and writes");
            let k = if kind == RequestKind::Read { 'R' } else { 'W' };
            writeln!(out, "{},{k},{addr:#x}", r.cycle).map_err(io)?;
        }
        out.flush().map_err(io)
    }
}

impl RequestSource for Generator {
    fn next_request(&mut self) -> Result<Option<TraceRecord>> {
        if self.index >= self.opts.requests {
            return Ok(None);
        }
        let i = self.index;
        self.index += 1;
        let pages = self.opts.footprint / PAGE;
        let lines = pages * (PAGE / LINE);
        let (kind, addr) = match self.opts.pattern {
            Pattern::Stream => (self.kind(), (i % lines) * LINE),
            Pattern::Random => (self.kind(), self.rng.below(lines) * LINE),
            Pattern::PageCopy => {
                let per_page = PAGE / LINE;
                let step = i % (2 * per_page);
                if step == 0 {
                    self.copy_src = self.rng.below(pages) * PAGE;
                    self.copy_dst = self.rng.below(pages) * PAGE;
                }
                if step < per_page {
                    (RequestKind::Read, self.copy_src + step * LINE)
                } else {
                    (RequestKind::Write, self.copy_dst + (step - per_page) * LINE)
                }
            }
        };
        Ok(Some(TraceRecord::access(
            i * self.opts.interval,
            kind,
            addr,
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(pattern: Pattern) -> GenOptions {
        GenOptions {
            pattern,
            requests: 256,
            interval: 2,
            write_fraction: 0.25,
            footprint: 1 << 20,
            seed: 1,
        }
    }

    /// (cycle, kind, address) of every request.
    struct Req {
        cycle: u64,
        kind: RequestKind,
        addr: u64,
    }

    fn all(o: GenOptions) -> Vec<Req> {
        let mut g = Generator::new(o).unwrap();
        std::iter::from_fn(|| g.next_request().unwrap())
            .map(|r| {
                let (kind, addr) = r.as_access().unwrap();
                Req {
                    cycle: r.cycle,
                    kind,
                    addr,
                }
            })
            .collect()
    }

    #[test]
    fn patterns_have_their_shape_and_are_deterministic() {
        let s = all(opts(Pattern::Stream));
        assert_eq!(s.len(), 256);
        assert!(s
            .iter()
            .enumerate()
            .all(|(i, r)| r.addr == i as u64 * 64 && r.cycle == 2 * i as u64));
        let r1 = all(opts(Pattern::Random));
        let key = |v: &[Req]| {
            v.iter()
                .map(|r| (r.cycle, r.kind, r.addr))
                .collect::<Vec<_>>()
        };
        assert_eq!(key(&r1), key(&all(opts(Pattern::Random))));
        assert!(r1.iter().all(|r| r.addr < 1 << 20 && r.addr % 64 == 0));
        let writes = r1.iter().filter(|r| r.kind == RequestKind::Write).count();
        assert!(
            (30..100).contains(&writes),
            "about a quarter are writes: {writes}"
        );
        let p = all(opts(Pattern::PageCopy));
        assert!(p[..64]
            .iter()
            .all(|r| r.kind == RequestKind::Read && r.addr / 4096 == p[0].addr / 4096));
        assert!(p[64..128]
            .iter()
            .all(|r| r.kind == RequestKind::Write && r.addr / 4096 == p[64].addr / 4096));
        assert!(Generator::new(GenOptions {
            footprint: 100,
            ..opts(Pattern::Stream)
        })
        .is_err());
    }
}
