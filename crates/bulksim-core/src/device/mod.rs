//! The device model of one channel: the rule table compiled into dense ready-at arrays, ring
//! buffers for windowed rules (tFAW), the open row of every bank, and per-command counts. It
//! answers "when is this command legal here" and "which command does this access need next",
//! and applies an issued command. It knows nothing of requests or scheduling.
//!
//! Ready-at times are kept in two combined tables: `rank_ready[rank]` holds, per command, the
//! earliest cycle allowed by the channel- and rank-level rules, `banks[bank].ready` that of the
//! bank-group- and bank-level rules. An issued command pushes each rule's deadline into every
//! row under the rule's node (a channel rule into every rank, a bank-group rule into its
//! banks), so the scheduler's question (asked for each queued request whose cached ready hint
//! has come due, see `controller::queue`) is two loads and a max. Rules with the same
//! preceding command, level and sibling flag are merged at start-up into one effect that lists
//! only the following commands it constrains, with their latencies: most effects touch two to
//! six of the eleven commands. Zero latencies are dropped (they raise a deadline only to
//! `now`, which constrains nothing), rules of a level with one node per parent move to the
//! parent's row (a channel of one rank, a rank of one bank group), and sibling rules among
//! single children vanish. The open-row change count lets callers cache ready times.
//!
//! A part whose precharge writes back only the row's dirty blocks (PCM,
//! `Spec::precharge_per_dirty_block`) compiles its rule table twice: once with nRP = 0, whose
//! latencies go into the ordinary effects, and once as given; each rule whose latency differs
//! keeps its nRP multiple apart (`DirtyPrecharge`), applied at a precharge (PRE, RDA, WRA,
//! PREA) times the dirty blocks of the row it closes. Every other part has no such state and
//! pays one untaken branch per command.
//!
//! A command addressing a bank set (DDR5's same-bank refresh, `Command::addresses_bank_set`)
//! keeps its bank-level effects apart and applies them to each bank of its set; its earliest
//! cycle is the latest of its banks', and it is legal once all of them are closed.

pub mod command_log;

use crate::mapping::DramAddr;
use crate::spec::{Command, Level, Rule, Spec, NUM_COMMANDS, TIMING_LEVELS};
pub use command_log::CommandLog;

/// One issued command, as buffered for the command log.
#[derive(Clone, Copy, Debug)]
pub struct IssuedCommand {
    pub cycle: u64,
    pub command: Command,
    pub addr: DramAddr,
}

/// Marks a closed bank in `BankState::open_row`.
pub const NO_ROW: u32 = u32::MAX;

/// What one rank did, for the energy model: command counts and the cycles spent with at least
/// one bank open (active standby) or all banks precharged (precharge standby).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RankActivity {
    pub acts: u64,
    /// Banks closed by PRE, PREA (each open bank) or auto-precharge.
    pub precharges: u64,
    pub reads: u64,
    pub writes: u64,
    /// TRANSFER halves: internal reads and writes with no channel I/O.
    pub transfer_reads: u64,
    pub transfer_writes: u64,
    pub refreshes: u64,
    /// Of `refreshes`, those at the fine (4x) granularity of an adaptive refresh run.
    pub fine_refreshes: u64,
    /// Same-bank refreshes (REFsb), each of one bank index in every bank group.
    pub same_bank_refreshes: u64,
    /// Bursts (64-B blocks) written back to the array by precharges, on parts whose
    /// precharge writes back only the dirty blocks (PCM); 0 on others.
    pub dirty_blocks_written: u64,
    pub active_cycles: u64,
    pub precharged_cycles: u64,
    pub(crate) interval_start: u64,
}

impl RankActivity {
    /// Adds another's command counts and standby cycles (for totals).
    pub fn add_counts(&mut self, o: &RankActivity) {
        self.acts += o.acts;
        self.precharges += o.precharges;
        self.reads += o.reads;
        self.writes += o.writes;
        self.transfer_reads += o.transfer_reads;
        self.transfer_writes += o.transfer_writes;
        self.refreshes += o.refreshes;
        self.fine_refreshes += o.fine_refreshes;
        self.same_bank_refreshes += o.same_bank_refreshes;
        self.dirty_blocks_written += o.dirty_blocks_written;
        self.active_cycles += o.active_cycles;
        self.precharged_cycles += o.precharged_cycles;
    }

    /// Ends the current standby interval at `now`, booking it as active or precharged.
    fn close_interval(&mut self, now: u64, was_active: bool) {
        let span = now - self.interval_start;
        if was_active {
            self.active_cycles += span;
        } else {
            self.precharged_cycles += span;
        }
        self.interval_start = now;
    }
}

/// One bank: its ready-at row (bank-group and bank rules) and its open row.
#[derive(Clone, Copy, Debug)]
struct BankState {
    ready: Row,
    open_row: u32,
}

type Row = [u64; NUM_COMMANDS];

/// A following command and the cycles it must wait: one entry of a sparse effect.
type Target = (usize, u64);

/// The merged non-window rules of one preceding command at one level: each following command
/// they constrain, with its latency (the largest of the merged rules').
#[derive(Clone, Debug)]
struct Effect {
    level: usize,
    sibling: bool,
    targets: Vec<Target>,
}

/// A compiled window rule: the last `size` issue times of its trigger per node.
#[derive(Clone, Debug)]
struct Window {
    level: usize,
    size: usize,
    /// The following commands, each with the window's latency.
    targets: Vec<Target>,
    /// `size` slots per node; `next[node]` is the slot to overwrite (the oldest when full).
    times: Vec<u64>,
    next: Vec<u32>,
    filled: Vec<u32>,
}

/// One rule's nRP part on a part whose precharge takes nRP per dirty block: after the
/// preceding command, `following` on the node waits `fixed + multiple x nRP x dirty blocks`
/// (`fixed`, the latency with nRP = 0, is also in the ordinary effects).
#[derive(Clone, Copy, Debug)]
struct RpTarget {
    level: usize,
    sibling: bool,
    following: usize,
    fixed: u64,
    multiple: u64,
}

/// The dirty blocks of every bank's open row and the rules they lengthen
/// (`Spec::precharge_per_dirty_block`).
struct DirtyPrecharge {
    /// `words` 64-bit words per bank: bit b is set when burst b of the open row was written
    /// (WR, WRA, or a TRANSFER's TRW) since the row's ACT.
    blocks: Vec<u64>,
    words: usize,
    /// log2 of the burst length: a column address to its burst (block) in the row.
    block_shift: u32,
    /// Cycles per dirty block (the part's nRP).
    per_block: u64,
    /// Per preceding command, the rules whose latency holds nRP.
    targets: [Vec<RpTarget>; NUM_COMMANDS],
}

impl DirtyPrecharge {
    /// Marks the block of the burst at `column` of `bank`'s open row written.
    #[inline]
    fn mark(&mut self, bank: usize, column: u32) {
        let block = (column >> self.block_shift) as usize;
        self.blocks[bank * self.words + block / 64] |= 1 << (block % 64);
    }

    /// The dirty blocks of `bank`'s open row, which a precharge writes back: counts and
    /// clears them.
    #[inline]
    fn take(&mut self, bank: usize) -> u64 {
        let words = &mut self.blocks[bank * self.words..(bank + 1) * self.words];
        let n = words.iter().map(|w| w.count_ones() as u64).sum();
        words.fill(0);
        n
    }
}

/// The ready-at rows: one per rank (channel and rank rules), one per bank (bank-group and bank
/// rules, with the bank's open row).
struct ReadyTables {
    banks_per_group: usize,
    rank_ready: Vec<Row>,
    banks: Vec<BankState>,
}

impl ReadyTables {
    /// Raises each target's deadline to `base + latency` in the rows under `node` of `level`:
    /// every rank for channel rules, the rank for rank rules, the group's banks for bank-group
    /// rules, the bank for bank rules. Always inlined: an issued command calls it for each
    /// of its effects, and the call's own cost was a third of it (trace replay -1.5%).
    #[inline(always)]
    fn raise(&mut self, level: usize, node: usize, targets: &[Target], base: u64) {
        let raise_row = |row: &mut Row| {
            for &(f, lat) in targets {
                row[f] = row[f].max(base + lat);
            }
        };
        match level {
            0 => self.rank_ready.iter_mut().for_each(raise_row),
            1 => raise_row(&mut self.rank_ready[node]),
            2 => {
                let group = node * self.banks_per_group..(node + 1) * self.banks_per_group;
                self.banks[group]
                    .iter_mut()
                    .for_each(|b| raise_row(&mut b.ready));
            }
            _ => raise_row(&mut self.banks[node].ready),
        }
    }
}

/// A dirty-precharge part's rule table with nRP = 0 (each rule's latency without nRP) and its
/// empty dirty-block record; `(None, None)` for every other part.
#[allow(clippy::type_complexity)]
fn dirty_precharge_setup(
    spec: &Spec,
    rules: &[Rule],
    nodes: &[usize; TIMING_LEVELS],
) -> (Option<Vec<Rule>>, Option<Box<DirtyPrecharge>>) {
    if !spec.precharge_per_dirty_block {
        return (None, None);
    }
    let o = &spec.organisation;
    let t = &spec.timing;
    let zero = spec.standard.rules(&crate::spec::Timing {
        n_rp: 0,
        ..t.clone()
    });
    assert_eq!(
        zero.len(),
        rules.len(),
        "{}: a dirty-precharge part needs its standard's rule table",
        spec.name
    );
    let blocks_per_row = (o.columns / o.burst_length).max(1) as usize;
    let words = blocks_per_row.div_ceil(64);
    let dirty = DirtyPrecharge {
        blocks: vec![0; nodes[Level::Bank as usize] * words],
        words,
        block_shift: o.burst_length.trailing_zeros(),
        per_block: t.n_rp as u64,
        targets: Default::default(),
    };
    (Some(zero), Some(Box::new(dirty)))
}

impl DirtyPrecharge {
    /// Records the nRP multiple of `rule` (whose latency without nRP is `fixed`) as targets
    /// lengthened per dirty block, and returns the latency the rule keeps.
    fn take_rp_part(&mut self, spec: &Spec, rule: &Rule, fixed: u32, level: usize) -> u32 {
        let rp = (rule.latency - fixed) as u64;
        if rp > 0 && self.per_block > 0 {
            assert!(rule.window == 0, "{}: nRP in a window rule", spec.name);
            for &p in rule.preceding {
                for &f in rule.following {
                    self.targets[p as usize].push(RpTarget {
                        level,
                        sibling: rule.sibling,
                        following: f as usize,
                        fixed: fixed as u64,
                        multiple: rp / self.per_block,
                    });
                }
            }
        }
        fixed
    }
}

impl Window {
    /// The compiled form of window rule `rule` at `level` (of `nodes` nodes), empty.
    fn for_rule(rule: &Rule, level: usize, nodes: usize) -> Window {
        let size = rule.window as usize;
        Window {
            level,
            size,
            targets: rule
                .following
                .iter()
                .map(|&f| (f as usize, rule.latency as u64))
                .collect(),
            times: vec![0; nodes * size],
            next: vec![0; nodes],
            filled: vec![0; nodes],
        }
    }
}

/// Moves the bank-level effect of the bank-set command (REFsb) out of `effects`: its targets
/// are applied to each bank of the set (`Device::raise_bank_set`), not to the address's bank.
fn take_bank_set_targets(effects: &mut [Vec<Effect>; NUM_COMMANDS]) -> Vec<Target> {
    let mut targets = Vec::new();
    for cmd in Command::ALL.into_iter().filter(|c| c.addresses_bank_set()) {
        let list = &mut effects[cmd as usize];
        if let Some(i) = list
            .iter()
            .position(|e| e.level == Level::Bank as usize && !e.sibling)
        {
            targets = list.remove(i).targets;
        }
        assert!(
            list.iter()
                .all(|e| e.level != Level::BankGroup as usize && !e.sibling),
            "{}: bank-group and sibling rules of a bank-set command are not modelled",
            cmd.name()
        );
    }
    targets
}

/// Adds a non-window rule to the effects of its preceding commands: one effect per (level,
/// sibling), one target per following command holding the largest latency.
fn merge_effect(effects: &mut [Vec<Effect>; NUM_COMMANDS], rule: &Rule, level: usize) {
    for &p in rule.preceding {
        let list: &mut Vec<Effect> = &mut effects[p as usize];
        let at = match list
            .iter()
            .position(|e| e.level == level && e.sibling == rule.sibling)
        {
            Some(i) => i,
            None => {
                list.push(Effect {
                    level,
                    sibling: rule.sibling,
                    targets: Vec::new(),
                });
                list.len() - 1
            }
        };
        let targets = &mut list[at].targets;
        for &f in rule.following {
            let f = f as usize;
            match targets.iter_mut().find(|t| t.0 == f) {
                Some(t) => t.1 = t.1.max(rule.latency as u64),
                None => targets.push((f, rule.latency as u64)),
            }
        }
    }
}

pub struct Device {
    channel: u32,
    ranks: usize,
    bankgroups: usize,
    banks_per_group: usize,
    nodes: [usize; TIMING_LEVELS],
    ready: ReadyTables,
    effects: [Vec<Effect>; NUM_COMMANDS],
    windows: Vec<Window>,
    window_triggers: [Vec<usize>; NUM_COMMANDS],
    /// The bank-level targets of the bank-set command (REFsb), applied to each bank of its
    /// set rather than to the one bank its address names; empty for parts without one.
    bank_set_targets: Vec<Target>,
    open_banks_in_rank: Vec<u32>,
    rows_per_subarray: u32,
    activity: Vec<RankActivity>,
    command_counts: [u64; NUM_COMMANDS],
    open_row_changes: u64,
    /// PCM's precharge per dirty block; `None` for every other part.
    dirty: Option<Box<DirtyPrecharge>>,
    /// Commands issued since the last drain, when logging is on.
    log: Option<Vec<IssuedCommand>>,
    /// Per command, whether its deadlines are kept (`only_commands`); checked at issue in
    /// debug builds.
    kept: [bool; NUM_COMMANDS],
}

impl Device {
    /// Builds the device of channel `channel` for `spec` (whose organisation already carries
    /// the configured rank count). The rule table must have passed `validate_rules`.
    pub fn new(spec: &Spec, channel: u32) -> Device {
        Self::with_rules(spec, &spec.rules(), channel)
    }

    pub fn with_rules(spec: &Spec, rules: &[Rule], channel: u32) -> Device {
        let o = &spec.organisation;
        let ranks = o.ranks as usize;
        let bankgroups = o.bankgroups as usize;
        let banks_per_group = o.banks_per_group as usize;
        let nodes = [
            1,
            ranks,
            ranks * bankgroups,
            ranks * bankgroups * banks_per_group,
        ];
        let mut effects: [Vec<Effect>; NUM_COMMANDS] = Default::default();
        let mut windows = Vec::new();
        let mut window_triggers: [Vec<usize>; NUM_COMMANDS] = Default::default();
        // Children per node of each level: a channel of one rank, or a rank of one bank group,
        // constrains exactly what its only child does, so such rules are applied at the child
        // (one row instead of several) and sibling rules there, having no siblings, vanish.
        let children = [ranks, bankgroups, banks_per_group];
        let fold = |level: usize| match level {
            0 if ranks == 1 => 1,
            2 if bankgroups == 1 => 1,
            l => l,
        };
        let (zero_rp, mut dirty) = dirty_precharge_setup(spec, rules, &nodes);
        for (i, rule) in rules.iter().enumerate() {
            let level = rule.level as usize;
            if rule.sibling && level > 0 && children[level - 1] == 1 {
                continue;
            }
            let level = if rule.sibling { level } else { fold(level) };
            let mut rule = rule.clone();
            if let (Some(zero), Some(d)) = (&zero_rp, dirty.as_mut()) {
                rule.latency = d.take_rp_part(spec, &rule, zero[i].latency, level);
            }
            if rule.window > 0 {
                for &p in rule.preceding {
                    window_triggers[p as usize].push(windows.len());
                }
                windows.push(Window::for_rule(&rule, level, nodes[level]));
            } else {
                merge_effect(&mut effects, &rule, level);
            }
        }
        for list in &mut effects {
            for e in list.iter_mut() {
                e.targets.retain(|&(_, lat)| lat > 0);
                e.targets.sort_unstable();
            }
            list.retain(|e| !e.targets.is_empty());
        }
        let bank_set_targets = take_bank_set_targets(&mut effects);
        Device {
            channel,
            ranks,
            bankgroups,
            banks_per_group,
            nodes,
            ready: ReadyTables {
                banks_per_group,
                rank_ready: vec![[0; NUM_COMMANDS]; ranks],
                banks: vec![
                    BankState {
                        ready: [0; NUM_COMMANDS],
                        open_row: NO_ROW,
                    };
                    nodes[Level::Bank as usize]
                ],
            },
            effects,
            windows,
            window_triggers,
            bank_set_targets,
            open_banks_in_rank: vec![0; ranks],
            rows_per_subarray: o.rows_per_subarray,
            activity: vec![RankActivity::default(); ranks],
            command_counts: [0; NUM_COMMANDS],
            open_row_changes: 0,
            dirty,
            log: None,
            kept: [true; NUM_COMMANDS],
        }
    }

    /// Stops raising the deadlines of commands outside `used`, which will never be issued or
    /// asked about here (a controller without in-DRAM bulk work never issues ACT2 or the
    /// TRANSFER halves, and under one page policy only one pair of column commands): an
    /// issued ACT then updates 4 bank deadlines instead of 9, say. The deadlines of the
    /// commands kept are the same as before.
    pub fn only_commands(&mut self, used: &[Command]) {
        let keep = |&(f, _): &Target| used.iter().any(|&c| c as usize == f);
        for list in &mut self.effects {
            for e in list.iter_mut() {
                e.targets.retain(keep);
            }
            list.retain(|e| !e.targets.is_empty());
        }
        for w in &mut self.windows {
            w.targets.retain(keep);
        }
        self.bank_set_targets.retain(keep);
        for (c, kept) in self.kept.iter_mut().enumerate() {
            *kept &= used.iter().any(|&u| u as usize == c);
        }
    }

    /// Starts buffering issued commands for the command log.
    pub fn enable_log(&mut self) {
        self.log = Some(Vec::new());
    }

    /// Hands buffered commands to `sink` in issue order and empties the buffer.
    pub fn drain_log(&mut self, mut sink: impl FnMut(u32, &IssuedCommand)) {
        if let Some(buf) = &mut self.log {
            for c in buf.iter() {
                sink(self.channel, c);
            }
            buf.clear();
        }
    }

    /// The node index of `addr` at a timing level.
    #[inline]
    fn node(addr: &DramAddr, level: usize) -> usize {
        match level {
            0 => 0,
            1 => addr.rank as usize,
            2 => addr.bankgroup_index as usize,
            _ => addr.bank_index as usize,
        }
    }

    /// Earliest cycle at which `cmd` satisfies every timing rule at `addr` (state not checked).
    #[inline]
    pub fn earliest(&self, cmd: Command, addr: &DramAddr) -> u64 {
        let c = cmd as usize;
        let rank = self.ready.rank_ready[addr.rank as usize][c];
        if cmd.scope() == Level::Rank {
            rank
        } else if cmd.addresses_bank_set() {
            self.bank_set(addr)
                .map(|b| self.ready.banks[b].ready[c])
                .fold(rank, u64::max)
        } else {
            rank.max(self.ready.banks[addr.bank_index as usize].ready[c])
        }
    }

    /// How many times any bank's open row has changed. While it stays the same, every access
    /// needs the same command as before, and that command's earliest cycle can only have
    /// grown (deadlines only rise): what lets the controller cache ready times.
    #[inline]
    pub fn open_row_changes(&self) -> u64 {
        self.open_row_changes
    }

    /// The command an access needs next and the earliest cycle it may issue: the scheduler's
    /// question for every queued request, answered with one bank and one rank lookup.
    #[inline]
    pub fn next_for(&self, column_cmd: Command, addr: &DramAddr) -> (Command, u64) {
        self.next_at(column_cmd, addr.bank_index, addr.rank, addr.row)
    }

    /// `next_for` from the three fields of the address it reads (a bank index, its rank, the
    /// row), for callers that keep only those.
    #[inline(always)]
    pub fn next_at(
        &self,
        column_cmd: Command,
        bank_index: u32,
        rank: u32,
        row: u32,
    ) -> (Command, u64) {
        let bank = &self.ready.banks[bank_index as usize];
        let cmd = match bank.open_row {
            NO_ROW => Command::Act,
            open if open == row => column_cmd,
            _ => Command::Pre,
        };
        let c = cmd as usize;
        (
            cmd,
            bank.ready[c].max(self.ready.rank_ready[rank as usize][c]),
        )
    }

    #[inline]
    pub fn open_row(&self, addr: &DramAddr) -> Option<u32> {
        match self.ready.banks[addr.bank_index as usize].open_row {
            NO_ROW => None,
            row => Some(row),
        }
    }

    #[inline]
    pub fn rank_has_open_bank(&self, rank: u32) -> bool {
        self.open_banks_in_rank[rank as usize] > 0
    }

    /// Whether the bank state allows `cmd` at `addr` (timing aside).
    pub fn is_legal(&self, cmd: Command, addr: &DramAddr) -> bool {
        let open = self.ready.banks[addr.bank_index as usize].open_row;
        match cmd {
            Command::Act => open == NO_ROW,
            Command::Act2 => {
                open != NO_ROW && open != addr.row && open / self.rows_per_subarray == addr.subarray
            }
            Command::Pre => open != NO_ROW,
            Command::PreA => true,
            Command::Ref => self.open_banks_in_rank[addr.rank as usize] == 0,
            Command::RefSb => self
                .bank_set(addr)
                .all(|b| self.ready.banks[b].open_row == NO_ROW),
            _ => open == addr.row,
        }
    }

    /// Applies `cmd` at `addr` issued at cycle `now`: timing consequences and state change.
    pub fn issue(&mut self, cmd: Command, addr: &DramAddr, now: u64) {
        debug_assert!(self.is_legal(cmd, addr), "{cmd:?} illegal at {addr:?}");
        debug_assert!(self.earliest(cmd, addr) <= now, "{cmd:?} early at {now}");
        debug_assert!(
            self.kept[cmd as usize],
            "{cmd:?}: its deadlines are not kept"
        );
        let c = cmd as usize;
        for e in &self.effects[c] {
            let node = Self::node(addr, e.level);
            if e.sibling {
                let (first, count) = self.siblings(e.level, node);
                for n in (first..first + count).filter(|&n| n != node) {
                    self.ready.raise(e.level, n, &e.targets, now);
                }
            } else {
                self.ready.raise(e.level, node, &e.targets, now);
            }
        }
        if cmd.addresses_bank_set() {
            self.raise_bank_set(addr, now);
        }
        for &w in &self.window_triggers[c] {
            let win = &mut self.windows[w];
            let node = Self::node(addr, win.level);
            let base = node * win.size;
            let slot = win.next[node] as usize;
            win.times[base + slot] = now;
            win.next[node] = ((slot + 1) % win.size) as u32;
            win.filled[node] = (win.filled[node] + 1).min(win.size as u32);
            if win.filled[node] as usize == win.size {
                let oldest = win.times[base + win.next[node] as usize];
                self.ready.raise(win.level, node, &win.targets, oldest);
            }
        }
        if self.dirty.is_some() {
            self.dirty_precharge(cmd, addr, now);
        }
        self.apply_state(cmd, addr, now);
        self.command_counts[c] += 1;
        if let Some(log) = &mut self.log {
            log.push(IssuedCommand {
                cycle: now,
                command: cmd,
                addr: *addr,
            });
        }
    }

    /// A dirty-precharge part: marks written blocks, and at a precharge applies the nRP part
    /// of its rules times the blocks it writes back (a PREA: the most of any of its banks,
    /// bulksim's choice, so an ACT after it waits for the slowest bank's write-back). Out of
    /// line and cold: DRAM parts never call it, and the hot `issue` stays small.
    #[cold]
    #[inline(never)]
    fn dirty_precharge(&mut self, cmd: Command, addr: &DramAddr, now: u64) {
        let bank = addr.bank_index as usize;
        let rank = addr.rank as usize;
        let per_rank = self.bankgroups * self.banks_per_group;
        let Some(d) = self.dirty.as_mut() else {
            return;
        };
        let (written, slowest) = match cmd {
            // A TRANSFER's write half fills the row buffer as a WR does.
            Command::Wr | Command::Trw => {
                d.mark(bank, addr.column);
                return;
            }
            Command::WrA => {
                d.mark(bank, addr.column);
                let n = d.take(bank);
                (n, n)
            }
            Command::Pre | Command::RdA => {
                let n = d.take(bank);
                (n, n)
            }
            Command::PreA => (rank * per_rank..(rank + 1) * per_rank)
                .map(|b| d.take(b))
                .fold((0, 0), |(sum, most), n| (sum + n, most.max(n))),
            Command::Act | Command::Act2 => {
                d.take(bank);
                return;
            }
            _ => return,
        };
        self.activity[rank].dirty_blocks_written += written;
        if slowest == 0 {
            return; // the fixed parts are in the ordinary effects
        }
        let d = self.dirty.as_ref().expect("checked above");
        for t in &d.targets[cmd as usize] {
            let lat = t.fixed + t.multiple * d.per_block * slowest;
            let target = [(t.following, lat)];
            let node = Self::node(addr, t.level);
            if t.sibling {
                let (first, count) = self.siblings(t.level, node);
                for n in (first..first + count).filter(|&n| n != node) {
                    self.ready.raise(t.level, n, &target, now);
                }
            } else {
                self.ready.raise(t.level, node, &target, now);
            }
        }
    }

    fn apply_state(&mut self, cmd: Command, addr: &DramAddr, now: u64) {
        let bank = addr.bank_index as usize;
        let rank = addr.rank as usize;
        let was_open = self.open_banks_in_rank[rank];
        match cmd {
            Command::Act => {
                self.set_open_row(bank, addr.row);
                self.open_banks_in_rank[rank] += 1;
                self.activity[rank].acts += 1;
            }
            Command::Act2 => {
                // The row buffer now drives the destination row, which stays open.
                self.set_open_row(bank, addr.row);
                self.activity[rank].acts += 1;
            }
            Command::Pre | Command::RdA | Command::WrA => {
                if self.ready.banks[bank].open_row != NO_ROW {
                    self.set_open_row(bank, NO_ROW);
                    self.open_banks_in_rank[rank] -= 1;
                    self.activity[rank].precharges += 1;
                }
            }
            Command::PreA => {
                let per_rank = self.bankgroups * self.banks_per_group;
                for b in rank * per_rank..(rank + 1) * per_rank {
                    self.set_open_row(b, NO_ROW);
                }
                self.activity[rank].precharges += was_open as u64;
                self.open_banks_in_rank[rank] = 0;
            }
            Command::Rd
            | Command::Wr
            | Command::Ref
            | Command::Trr
            | Command::Trw
            | Command::RefSb => {}
        }
        let activity = &mut self.activity[rank];
        match cmd {
            Command::Rd | Command::RdA => activity.reads += 1,
            Command::Wr | Command::WrA => activity.writes += 1,
            Command::Trr => activity.transfer_reads += 1,
            Command::Trw => activity.transfer_writes += 1,
            Command::Ref => activity.refreshes += 1,
            Command::RefSb => activity.same_bank_refreshes += 1,
            _ => {}
        }
        let is_open = self.open_banks_in_rank[rank];
        if (was_open == 0) != (is_open == 0) {
            activity.close_interval(now, was_open > 0);
        }
    }

    #[inline]
    fn set_open_row(&mut self, bank: usize, row: u32) {
        let b = &mut self.ready.banks[bank];
        if b.open_row != row {
            b.open_row = row;
            self.open_row_changes += 1;
        }
    }

    /// Per-rank activity up to cycle `end` (for energy).
    pub fn activity(&self, end: u64) -> Vec<RankActivity> {
        self.activity
            .iter()
            .zip(&self.open_banks_in_rank)
            .map(|(a, &open)| {
                let mut a = a.clone();
                a.close_interval(end.max(a.interval_start), open > 0);
                a
            })
            .collect()
    }

    /// The banks (indexes into the bank rows) of the bank set `addr` names: bank `addr.bank`
    /// of every bank group of its rank.
    fn bank_set(&self, addr: &DramAddr) -> impl Iterator<Item = usize> {
        let per_group = self.banks_per_group;
        let first = addr.rank as usize * self.bankgroups * per_group + addr.bank as usize;
        (0..self.bankgroups).map(move |g| first + g * per_group)
    }

    /// Applies the bank-set command's bank-level targets to every bank of its set. Out of
    /// line: a REFsb issues a few times per tREFI.
    #[cold]
    #[inline(never)]
    fn raise_bank_set(&mut self, addr: &DramAddr, now: u64) {
        let per_group = self.banks_per_group;
        let first = addr.rank as usize * self.bankgroups * per_group + addr.bank as usize;
        for g in 0..self.bankgroups {
            let bank = first + g * per_group;
            self.ready
                .raise(Level::Bank as usize, bank, &self.bank_set_targets, now);
        }
    }

    /// First node index and count of the nodes sharing `node`'s parent at `level`.
    fn siblings(&self, level: usize, node: usize) -> (usize, usize) {
        let per_parent = match level {
            1 => self.ranks,
            2 => self.bankgroups,
            _ => self.banks_per_group,
        };
        debug_assert!(node < self.nodes[level]);
        (node - node % per_parent, per_parent)
    }

    /// Counts `count` REFs of `rank` without applying their timing: for refreshes of an idle
    /// controller booked in closed form, whose deadlines a later REF issued for real dominates.
    /// Swaps the timing consequences of `cmd` with those `other` (a device of the same
    /// organisation built from another spec) gives it: an adaptive refresh switches its REFs
    /// between the 1x and 4x tRFC this way.
    pub fn swap_effects(&mut self, cmd: Command, other: &mut Device) {
        std::mem::swap(
            &mut self.effects[cmd as usize],
            &mut other.effects[cmd as usize],
        );
    }

    /// The last REF of `rank` was a fine-granularity one (for its energy).
    pub fn note_fine_refresh(&mut self, rank: u32) {
        self.activity[rank as usize].fine_refreshes += 1;
    }

    pub fn count_refreshes(&mut self, rank: u32, count: u64) {
        self.activity[rank as usize].refreshes += count;
        self.command_counts[Command::Ref as usize] += count;
    }

    /// Whether issued commands are buffered for a command log.
    pub fn is_logging(&self) -> bool {
        self.log.is_some()
    }

    pub fn command_counts(&self) -> &[u64; NUM_COMMANDS] {
        &self.command_counts
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mapping::AddressMapper;
    use crate::spec::presets::preset;

    /// A device that keeps only the commands a channel without bulk work uses answers every
    /// question about them as the full device does, after commands to banks of one group,
    /// of another group and of another rank.
    #[test]
    fn only_commands_keeps_the_deadlines_of_the_commands_kept() {
        let mut spec = preset("DDR4_8Gb_x8_2400").unwrap();
        spec.organisation.ranks = 2;
        let mapper = AddressMapper::new(&spec.organisation, "RoRaBaBgCoCh", false).unwrap();
        let mut full = Device::new(&spec, 0);
        let mut kept = Device::new(&spec, 0);
        let used = [
            Command::Act,
            Command::Pre,
            Command::Rd,
            Command::Wr,
            Command::PreA,
            Command::Ref,
        ];
        kept.only_commands(&used);
        let addrs: Vec<DramAddr> = [(0, 0, 0), (0, 0, 1), (0, 1, 0), (1, 2, 3)]
            .iter()
            .map(|&(rank, group, bank)| mapper.locate(0, rank, group, bank, 7, 0))
            .collect();
        let script = [
            (Command::Act, 0, 0),
            (Command::Act, 2, 10),
            (Command::Act, 3, 20),
            (Command::Rd, 0, 40),
            (Command::Wr, 2, 60),
            (Command::Act, 1, 80),
            (Command::Rd, 3, 100),
            (Command::Pre, 0, 140),
        ];
        for &(cmd, at, _) in &script {
            // Issue each command at the first cycle both devices allow (the same one).
            let t = full.earliest(cmd, &addrs[at]);
            assert_eq!(t, kept.earliest(cmd, &addrs[at]), "{cmd:?}");
            let now = t.max(script.iter().find(|s| s.0 == cmd).unwrap().2);
            full.issue(cmd, &addrs[at], now);
            kept.issue(cmd, &addrs[at], now);
            for a in &addrs {
                for &c in &used {
                    assert_eq!(full.earliest(c, a), kept.earliest(c, a), "{c:?} at {a:?}");
                }
            }
        }
        assert!(
            full.earliest(Command::Act2, &addrs[2]) > kept.earliest(Command::Act2, &addrs[2]),
            "ACT2's deadlines are no longer kept"
        );
    }
}
