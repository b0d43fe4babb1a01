//! A core's accesses through its first-level port: the program's and a copy's loads and
//! stores (`access`), non-temporal stores, movblks into its copy engine, and dce_rowclone
//! chunks offered to the bulk coordinator. Each translates its addresses first (a fault's
//! work goes before it), holds a memory port and a load/store queue entry, and waits while
//! a migration completes or bulk work in flight holds its bytes.

use super::dispatch::{Space, Step, StoreData};
use super::env::CoreEnv;
use super::{Core, NO_LINE};
use crate::bulk::{BulkKind, BulkOp};
use crate::cache::Origin;
use crate::error::Result;
use crate::port::Movblk;
use crate::system::dram_chunks::ChunkOutcome;
use crate::workload::program::Event;

impl Core {
    /// Thread `t`'s `movblk` from `src` to `dst` is one the system can run: a copy engine
    /// exists, `dst` is line-aligned and the two lines do not overlap.
    fn check_movblk(env: &CoreEnv, t: usize, src: u64, dst: u64) -> Result<()> {
        let l = env.timing.line;
        if env.bulk.engines().is_none() {
            return Err(env.err(
                t,
                "movblk needs a copy engine: set copy_engine.policy to ce_l1, dce, dce_nt or dce_rowclone",
            ));
        }
        if dst % l != 0 {
            return Err(env.err(
                t,
                format!("movblk dst {dst:#x} not aligned to the {l}-byte L1 line"),
            ));
        }
        if src < dst + l && dst < src + l {
            return Err(env.err(
                t,
                format!(
                    "movblk source {src:#x} and destination {dst:#x} overlap (a movblk copies {l} bytes)"
                ),
            ));
        }
        Ok(())
    }

    /// A `movblk` from `src` to `dst` (virtual): once every older instruction has retired,
    /// its source (as loads) and destination (as a store) are translated, the misses in
    /// flight for its lines complete, and it retires into the core's first-level engine
    /// queue (a full queue stalls dispatch).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn dispatch_movblk(
        &mut self,
        c: usize,
        t: usize,
        env: &mut CoreEnv,
        space: Space,
        src: u64,
        dst: u64,
        budget: &mut usize,
    ) -> Result<Step> {
        let ev = Event::Movblk { src, dst };
        let l = env.timing.line;
        Core::check_movblk(env, t, src, dst)?;
        if !self.window.is_empty() || self.mem_ports_left == 0 {
            return Ok(Step::Retry(ev, false));
        }
        let engines = env.bulk.engines().expect("checked by check_movblk");
        if !engines.has_room(env.mem, c) {
            env.bulk
                .engines_mut()
                .expect("engines")
                .stats
                .fifo_full_cycles += 1;
            return Ok(Step::Retry(ev, false));
        }
        let split = l - src % l;
        let Some(src_pa) = self.resolve(c, t, env, space, src, false)? else {
            return Ok(Step::Retry(ev, true));
        };
        let src_next = if split < l {
            match self.resolve(c, t, env, space, src + split, false)? {
                Some(pa) => pa,
                None => return Ok(Step::Retry(ev, true)),
            }
        } else {
            src_pa + l
        };
        let Some(dst_pa) = self.resolve(c, t, env, space, dst, true)? else {
            return Ok(Step::Retry(ev, true));
        };
        let op = Movblk {
            src: src_pa,
            src_next,
            split,
            dst: dst_pa,
            bytes: l,
            core: c,
        };
        // Misses in flight for its lines complete first, and bulk operations writing them.
        let ranges = [
            (src_pa, src_pa + split),
            (src_next, src_next + (l - split)),
            (dst_pa, dst_pa + l),
        ];
        for (a, b) in ranges {
            if a < b && (env.mem.fetching_in(a, b) || env.blocked(a) || env.blocked(b - 1)) {
                return Ok(Step::Retry(ev, false));
            }
        }
        if env.bulk.chunk_source_held(dst_pa, dst_pa + l) {
            return Ok(Step::Retry(ev, false));
        }
        self.mem_ports_left -= 1;
        let now = env.now;
        env.bulk
            .engines_mut()
            .expect("engines")
            .push(env.mem, op, now);
        self.push_mem_slot(env.now + env.timing.core_fs, NO_LINE);
        env.os.count_access(t as u32);
        *budget -= 1;
        Ok(Step::Next)
    }

    /// A load, or a store of `data`, at `va` through the first level, for `origin`: None
    /// when dispatched, else `Some(moved)` to retry it (`moved`: a fault's work was queued).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn access(
        &mut self,
        c: usize,
        t: usize,
        env: &mut CoreEnv,
        space: Space,
        va: u64,
        data: StoreData,
        origin: Origin,
        budget: &mut usize,
    ) -> Result<Option<bool>> {
        let write = !matches!(data, StoreData::None);
        if !self.has_mem_slot(&env.settings) {
            return Ok(Some(false));
        }
        let Some(pa) = self.resolve(c, t, env, space, va, write)? else {
            return Ok(Some(true));
        };
        if env.access_waits(c, pa, write) {
            return Ok(Some(false));
        }
        // A copy's store carries the bytes its load read (within one first-level line).
        let src_pa = match data {
            StoreData::From { src, .. } => match self.resolve(c, t, env, space, src, false)? {
                Some(pa) => pa,
                None => return Ok(Some(true)),
            },
            _ => 0,
        };
        let line = pa / env.timing.line;
        let found = env.mem.l1().array(c).probe(line);
        if write
            && found.is_none()
            && env.mem.l1_ref().waiting_stores(c) >= env.settings.store_queue
        {
            return Ok(Some(false));
        }
        if found.is_none() && !env.mem.request_fill(c, line, origin, write) {
            return Ok(Some(false));
        }
        let mut bytes = [0u8; 8];
        let stored: &[u8] = match data {
            StoreData::None => &[],
            StoreData::Program => {
                let store = env.sched.count_store(t);
                bytes = ((t as u64 + 1) << 48 | store).to_le_bytes();
                &bytes
            }
            StoreData::From { len, .. } => {
                let len = len as usize;
                env.mem.read_as_core(c, src_pa, &mut bytes[..len]);
                &bytes[..len]
            }
        };
        self.mem_ports_left -= 1;
        let next_cycle = env.now + env.timing.core_fs;
        // A fill request does not change the array: the probe still holds.
        let way = env.mem.l1().array(c).access_found(found);
        if write {
            // A program store writes its 8-byte word; a copy's store its own bytes.
            let offset = match data {
                StoreData::Program => (pa % env.timing.line) as usize & !7,
                _ => (pa % env.timing.line) as usize,
            };
            match way {
                Some(w) => env.mem.l1().array(c).write(w, offset, stored, origin),
                None => env.mem.add_store_bytes(c, line, offset, stored),
            }
            self.push_mem_slot(next_cycle, NO_LINE);
        } else if way.is_some() {
            let data_fs = env.now + env.timing.hit_fs;
            self.load_data_fs = self.load_data_fs.max(data_fs);
            self.push_mem_slot(data_fs, NO_LINE);
        } else {
            self.push_mem_slot(u64::MAX, line);
        }
        env.os.count_access(t as u32);
        *budget -= 1;
        Ok(None)
    }

    /// A non-temporal store (`system.memcpy = "software_nt"`) of the `len` bytes at `src` to
    /// `va`: as a copy's store, but around the caches (`Hierarchy::non_temporal_store`). It
    /// also waits while a fill of any line of its memory line is in flight (that fill's
    /// waiting stores are older and would land on top of its bytes). None when dispatched,
    /// else `Some(moved)` to retry it.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn store_non_temporal(
        &mut self,
        c: usize,
        t: usize,
        env: &mut CoreEnv,
        space: Space,
        va: u64,
        src: u64,
        len: u32,
        budget: &mut usize,
    ) -> Result<Option<bool>> {
        if !self.has_mem_slot(&env.settings) {
            return Ok(Some(false));
        }
        let Some(pa) = self.resolve(c, t, env, space, va, true)? else {
            return Ok(Some(true));
        };
        let memory_line = env.mem.last_line_bytes();
        let start = pa - pa % memory_line;
        if env.access_waits(c, pa, true) || env.mem.fetching_in(start, start + memory_line) {
            return Ok(Some(false));
        }
        let Some(src_pa) = self.resolve(c, t, env, space, src, false)? else {
            return Ok(Some(true));
        };
        let mut bytes = [0u8; 8];
        let bytes = &mut bytes[..len as usize];
        env.mem.read_as_core(c, src_pa, bytes);
        if !env.mem.non_temporal_store(c, pa, bytes) {
            return Ok(Some(false));
        }
        self.mem_ports_left -= 1;
        self.push_mem_slot(env.now + env.timing.core_fs, NO_LINE);
        env.os.count_access(t as u32);
        *budget -= 1;
        Ok(None)
    }

    /// Core `c` offers the chunk of `bytes` from `src` to `dst` (in `space`): translated
    /// here once every older instruction retired, decided by the bulk coordinator.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn dispatch_chunk(
        &mut self,
        c: usize,
        t: usize,
        env: &mut CoreEnv,
        space: Space,
        src: u64,
        dst: u64,
        bytes: u64,
        budget: &mut usize,
    ) -> Result<ChunkOutcome> {
        if !self.window.is_empty() || self.mem_ports_left == 0 {
            return Ok(ChunkOutcome::Retry(false));
        }
        let Some(src_pa) = self.resolve(c, t, env, space, src, false)? else {
            return Ok(ChunkOutcome::Retry(true));
        };
        let Some(src_last) = self.resolve(c, t, env, space, src + bytes - 1, false)? else {
            return Ok(ChunkOutcome::Retry(true));
        };
        let Some(dst_pa) = self.resolve(c, t, env, space, dst, true)? else {
            return Ok(ChunkOutcome::Retry(true));
        };
        let op = BulkOp {
            kind: BulkKind::Copy { src: src_pa },
            dst: dst_pa,
            bytes,
        };
        let outcome = env
            .bulk
            .offer_chunk((op, src_last), c, env.mem, env.now, env.timing.line)?;
        let probe_fs = env.bulk.chunk_probe_fs();
        match outcome {
            ChunkOutcome::Declined { probed: true } if probe_fs > 0 => {
                // The tag probe's time holds the routine's next instruction.
                self.push_slot(env.now + probe_fs, NO_LINE);
            }
            ChunkOutcome::HandedDown => {
                self.mem_ports_left -= 1;
                let ready = env.now + env.timing.core_fs + probe_fs;
                self.push_mem_slot(ready, NO_LINE);
                env.os.count_access(t as u32);
                *budget -= 1;
            }
            _ => {}
        }
        Ok(outcome)
    }

    /// The chunk just offered runs as movblks: the routine that offered it expands it.
    pub(super) fn decline_chunk(
        &mut self,
        t: usize,
        env: &mut CoreEnv,
        space: Space,
        step: crate::workload::memcpy::CopyStep,
    ) {
        let expansion = match space {
            Space::Physical => self.kernel_copy.as_mut(),
            Space::Virtual(_) => env.sched.memcpy_mut(t),
        };
        expansion
            .expect("the routine that offered the chunk")
            .decline(step);
    }
}
