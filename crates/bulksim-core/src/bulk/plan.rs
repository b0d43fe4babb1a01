//! Splitting one bulk operation into the pieces that execute it, by mechanism.
//!
//! `cpu` and `mc_dma`: every destination line is a channel line job. `rowclone` follows
//! section 3.3 of the RowClone paper: destination rows that are wholly covered, row-aligned,
//! and whose source is one row at the same columns of the same channel and rank become FPM
//! (same subarray), PSM TRANSFERs (another bank), or PSM twice through the temporary row of
//! another bank (another subarray of the same bank); other whole lines go by TRANSFER when
//! source and destination share a rank (through the temporary row when they share a bank),
//! and everything else — lines in another channel or rank, and bytes that are not whole
//! lines or not line-aligned with their source — goes over the channel. Zeroing copies from
//! the zero row of the destination's subarray (FPM) or of another bank (TRANSFER); a
//! non-zero init writes one row over the channel per rank and copies it to the others.

use super::reserved::ReservedRows;
use super::{BulkKind, BulkOp, LineJob, Move, Segment, SegmentKind};
use crate::config::Mechanism;
use crate::mapping::{AddressMapper, DramAddr};
use std::collections::HashMap;

/// How one operation executes, and how many of its bytes each way moves.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    /// In-DRAM segments, in execution order (each goes to its channel's engine).
    pub segments: Vec<Segment>,
    pub jobs: Vec<LineJob>,
    pub fpm_bytes: u64,
    pub psm_bytes: u64,
    /// Bytes moved over the channel (line jobs and engine-written seed rows).
    pub channel_bytes: u64,
}

pub struct Planner<'a> {
    mapper: &'a AddressMapper,
    mechanism: Mechanism,
    reserved: Option<ReservedRows>,
    lines_per_row: usize,
    bankgroups: u32,
    banks_per_group: u32,
    allow_fpm: bool,
}

/// A (source, destination) pair of lines, each as byte address and decoded location.
type LinePair = ((u64, DramAddr), (u64, DramAddr));

/// One destination line (and its source line, for a copy), decoded.
#[derive(Clone, Copy)]
struct Line {
    src: Option<(u64, DramAddr)>,
    dst: (u64, DramAddr),
}

impl<'a> Planner<'a> {
    pub fn new(
        mapper: &'a AddressMapper,
        mechanism: Mechanism,
        reserved: Option<ReservedRows>,
        lines_per_row: usize,
        bankgroups: u32,
        banks_per_group: u32,
    ) -> Planner<'a> {
        Planner {
            mapper,
            mechanism,
            reserved,
            lines_per_row,
            bankgroups,
            banks_per_group,
            allow_fpm: true,
        }
    }

    /// Without FPM for copies, copies within a subarray go through the temporary row (PSM).
    /// Zeroing whole rows still copies the subarray's zero row by FPM (it is not a copy of
    /// data, and the zero row is always in the same subarray).
    pub fn without_fpm(mut self) -> Self {
        self.allow_fpm = false;
        self
    }

    /// Plans operation `op` (with id `id`). Errors name what is wrong with it.
    pub fn plan(&self, op: &BulkOp, id: u32) -> Result<Plan, String> {
        let line = self.mapper.line_bytes();
        let capacity = self.mapper.capacity();
        let (d0, d1) = op.dst_range();
        if d1 > capacity || op.src_range().is_some_and(|(_, e)| e > capacity) {
            return Err(format!(
                "reaches beyond the memory's {capacity} bytes (0x{capacity:x})"
            ));
        }
        if let Some((s0, s1)) = op.src_range() {
            if s0 < d1 && d0 < s1 {
                return Err("source and destination overlap".into());
            }
        }
        // Source address minus destination address.
        let delta = match op.kind {
            BulkKind::Copy { src } => Some(src as i128 - op.dst as i128),
            BulkKind::Init { .. } => None,
        };
        let line_aligned = delta.map_or(true, |d| d.rem_euclid(line as i128) == 0);
        let in_dram = self.mechanism == Mechanism::Rowclone && line_aligned;
        let mut plan = Plan::default();
        let mut whole = Vec::new();
        let mut a = d0;
        while a < d1 {
            let end = (a / line + 1) * line;
            let piece_end = end.min(d1);
            if in_dram && a % line == 0 && piece_end == end {
                let dst = (a, self.checked(a)?);
                let src = match delta {
                    Some(d) => {
                        let s = (a as i128 + d) as u64;
                        Some((s, self.checked(s)?))
                    }
                    None => None,
                };
                whole.push(Line { src, dst });
            } else {
                self.check_piece(a, piece_end - a, delta)?;
                let src = delta.map(|d| (a as i128 + d) as u64);
                plan.jobs
                    .push(self.line_job(id, a, piece_end - a, src, init_value(op)));
                plan.channel_bytes += piece_end - a;
            }
            a = piece_end;
        }
        if !whole.is_empty() {
            self.plan_whole_lines(id, op, &whole, &mut plan);
        }
        Ok(plan)
    }

    /// Decodes `addr`, refusing RowClone's reserved rows.
    fn checked(&self, addr: u64) -> Result<DramAddr, String> {
        let a = self.mapper.decode(addr);
        match self.reserved {
            Some(r) if r.contains(a.row) => Err(format!(
                "touches 0x{addr:x}, in row {} which RowClone reserves (a zero or temporary row; see bulk.reserved_bytes)",
                a.row
            )),
            _ => Ok(a),
        }
    }

    fn check_piece(&self, a: u64, len: u64, delta: Option<i128>) -> Result<(), String> {
        if self.reserved.is_some() {
            self.checked(a)?;
            if let Some(d) = delta {
                self.checked((a as i128 + d) as u64)?;
                self.checked((a as i128 + d) as u64 + len - 1)?;
            }
        }
        Ok(())
    }

    /// A destination piece (within one line) moved over the channel: from `src` for a copy,
    /// else filled with `value`.
    fn line_job(&self, id: u32, a: u64, len: u64, src: Option<u64>, value: u8) -> LineJob {
        let line = self.mapper.line_bytes();
        let dst_line = a / line * line;
        let mut reads = Vec::new();
        let moves = match src {
            Some(s) => {
                let (first, last) = (s / line * line, (s + len - 1) / line * line);
                reads.push(first);
                if last != first {
                    reads.push(last);
                }
                Move::Copy {
                    src: s,
                    dst: a,
                    len,
                }
            }
            None => fill(a, len, value),
        };
        if len < line {
            reads.push(dst_line); // read-modify-write of a partly changed line
        }
        LineJob {
            op: id,
            reads,
            write: dst_line,
            moves,
        }
    }

    /// The same location in another bank of the rank (another bank group when there are
    /// several, so TRANSFERs between them pipeline at tCCD_S), at `row`.
    fn other_bank(&self, a: &DramAddr, row: u32) -> DramAddr {
        let (bg, bank) = if self.bankgroups > 1 {
            ((a.bankgroup + 1) % self.bankgroups, a.bank)
        } else {
            (a.bankgroup, (a.bank + 1) % self.banks_per_group)
        };
        self.mapper
            .locate(a.channel, a.rank, bg, bank, row, a.column)
    }

    fn at_row(&self, a: &DramAddr, row: u32) -> DramAddr {
        self.mapper
            .locate(a.channel, a.rank, a.bankgroup, a.bank, row, a.column)
    }

    /// Plans lines that each cover a whole destination line, destination row by destination
    /// row in first-touch order.
    fn plan_whole_lines(&self, id: u32, op: &BulkOp, lines: &[Line], plan: &mut Plan) {
        // The first row initialized over the channel per (channel, rank): later whole rows
        // with the same value are copied from it in DRAM.
        let mut seeds: HashMap<(u32, u32), DramAddr> = HashMap::new();
        for group in &by_destination_row(lines) {
            let whole_row = group.len() == self.lines_per_row;
            match op.kind {
                BulkKind::Copy { .. } => self.plan_copy_row(id, group, whole_row, plan),
                BulkKind::Init { value: 0 } => self.plan_zero_row(id, group, whole_row, plan),
                BulkKind::Init { value } => {
                    self.plan_value_row(id, group, whole_row, value, &mut seeds, plan)
                }
            }
        }
    }

    /// Copies the lines of one destination row: the whole row by FPM when it comes column
    /// for column from one source row of the same rank, else line by line.
    fn plan_copy_row(&self, id: u32, group: &[Line], whole_row: bool, plan: &mut Plan) {
        let line = self.mapper.line_bytes();
        let src_of = |l: &Line| l.src.expect("copy lines have a source");
        let first = src_of(&group[0]).1;
        let uniform = group.iter().all(|l| {
            let s = src_of(l).1;
            (s.channel, s.rank, s.bank_index, s.row)
                == (first.channel, first.rank, first.bank_index, first.row)
                && s.column == l.dst.1.column
        });
        if whole_row && uniform && self.same_rank(&first, &group[0].dst.1) {
            let pairs: Vec<_> = group.iter().map(|l| (src_of(l), l.dst)).collect();
            self.copy_row(id, &pairs, None, plan);
        } else {
            // Lines between banks go one by one; lines within a bank go through
            // the temporary row together (all there, then all back).
            let (mut across, mut within) = (Vec::new(), Vec::new());
            for l in group {
                let (s, d) = (src_of(l), l.dst);
                if !self.same_rank(&s.1, &d.1) {
                    plan.jobs.push(self.line_job(id, d.0, line, Some(s.0), 0));
                    plan.channel_bytes += line;
                } else if s.1.bank_index != d.1.bank_index {
                    across.push((s, d));
                } else {
                    within.push((s, d));
                }
            }
            for pairs in [across, within] {
                if !pairs.is_empty() {
                    self.copy_row(id, &pairs, None, plan);
                }
            }
        }
    }

    /// Zeroes the lines of one destination row from the subarray's reserved zero row: the
    /// whole row by FPM, else each line by TRANSFER from another bank.
    fn plan_zero_row(&self, id: u32, group: &[Line], whole_row: bool, plan: &mut Plan) {
        let line = self.mapper.line_bytes();
        let reserved = self.reserved.expect("rowclone reserves rows");
        let d = group[0].dst.1;
        let zero_row = reserved.zero_row(d.subarray);
        if whole_row {
            plan.segments.push(Segment {
                op: id,
                kind: SegmentKind::Fpm {
                    src: self.at_row(&d, zero_row),
                    dst: d,
                },
                moves: merged(group.iter().map(|l| fill(l.dst.0, line, 0))),
            });
            plan.fpm_bytes += line * group.len() as u64;
        } else {
            for l in group {
                plan.segments.push(Segment {
                    op: id,
                    kind: SegmentKind::Transfer {
                        src: self.other_bank(&l.dst.1, zero_row),
                        dst: l.dst.1,
                    },
                    moves: vec![fill(l.dst.0, line, 0)],
                });
                plan.psm_bytes += line;
            }
        }
    }

    /// Fills the lines of one destination row with a nonzero `value`: copied in DRAM from
    /// the rank's seed row when there is one and the row is whole, else written over the
    /// channel (a whole row written so becomes the rank's seed).
    fn plan_value_row(
        &self,
        id: u32,
        group: &[Line],
        whole_row: bool,
        value: u8,
        seeds: &mut HashMap<(u32, u32), DramAddr>,
        plan: &mut Plan,
    ) {
        let line = self.mapper.line_bytes();
        let d = group[0].dst.1;
        let seed = seeds.get(&(d.channel, d.rank)).copied();
        match (whole_row, seed) {
            (true, Some(seed)) => {
                let pairs: Vec<_> = group
                    .iter()
                    .map(|l| {
                        let s = self.at_row(&seed, seed.row);
                        let s = DramAddr {
                            column: l.dst.1.column,
                            ..s
                        };
                        ((self.mapper.encode(&s), s), l.dst)
                    })
                    .collect();
                self.copy_row(id, &pairs, Some(value), plan);
            }
            _ => {
                for l in group {
                    plan.segments.push(Segment {
                        op: id,
                        kind: SegmentKind::WriteLine { dst: l.dst.1 },
                        moves: vec![fill(l.dst.0, line, value)],
                    });
                    plan.channel_bytes += line;
                }
                if whole_row {
                    seeds.insert((d.channel, d.rank), d);
                }
            }
        }
    }

    fn same_rank(&self, a: &DramAddr, b: &DramAddr) -> bool {
        a.channel == b.channel && a.rank == b.rank
    }

    /// Copies lines within one rank in DRAM: a whole row of one subarray by FPM, lines
    /// between banks by TRANSFER, lines within a bank by TRANSFER twice through the temporary
    /// row of another bank. `pairs` are (source, destination) lines of one destination row;
    /// FPM needs them to be the whole row, copied column for column from one source row. With
    /// `fill_value`, the image gets that value.
    fn copy_row(&self, id: u32, pairs: &[LinePair], fill_value: Option<u8>, plan: &mut Plan) {
        let line = self.mapper.line_bytes();
        let mv = |src: u64, dst: u64| match fill_value {
            Some(v) => fill(dst, line, v),
            None => Move::Copy {
                src,
                dst,
                len: line,
            },
        };
        let (s, d) = (pairs[0].0 .1, pairs[0].1 .1);
        let bytes = line * pairs.len() as u64;
        if s.bank_index != d.bank_index {
            for &((sp, sa), (dp, da)) in pairs {
                plan.segments.push(Segment {
                    op: id,
                    kind: SegmentKind::Transfer { src: sa, dst: da },
                    moves: vec![mv(sp, dp)],
                });
            }
            plan.psm_bytes += bytes;
        } else if self.allow_fpm
            && pairs.len() == self.lines_per_row
            && s.subarray == d.subarray
            && pairs
                .iter()
                .all(|((_, sa), (_, da))| sa.row == s.row && sa.column == da.column)
        {
            plan.segments.push(Segment {
                op: id,
                kind: SegmentKind::Fpm { src: s, dst: d },
                moves: merged(pairs.iter().map(|&((sp, _), (dp, _))| mv(sp, dp))),
            });
            plan.fpm_bytes += bytes;
        } else {
            let temp_row = self.reserved.expect("rowclone reserves rows").temp_row();
            let temps: Vec<(u64, DramAddr)> = pairs
                .iter()
                .map(|&(_, (_, da))| {
                    let t = self.other_bank(&da, temp_row);
                    (self.mapper.encode(&t), t)
                })
                .collect();
            for (&((sp, sa), _), &(tp, ta)) in pairs.iter().zip(&temps) {
                plan.segments.push(Segment {
                    op: id,
                    kind: SegmentKind::Transfer { src: sa, dst: ta },
                    moves: vec![Move::Copy {
                        src: sp,
                        dst: tp,
                        len: line,
                    }],
                });
            }
            for (&(_, (dp, da)), &(tp, ta)) in pairs.iter().zip(&temps) {
                let moves = match fill_value {
                    Some(v) => fill(dp, line, v),
                    None => Move::Copy {
                        src: tp,
                        dst: dp,
                        len: line,
                    },
                };
                plan.segments.push(Segment {
                    op: id,
                    kind: SegmentKind::Transfer { src: ta, dst: da },
                    moves: vec![moves],
                });
            }
            plan.psm_bytes += bytes;
        }
    }
}

fn init_value(op: &BulkOp) -> u8 {
    match op.kind {
        BulkKind::Init { value } => value,
        BulkKind::Copy { .. } => 0,
    }
}

fn fill(dst: u64, len: u64, value: u8) -> Move {
    Move::Fill { dst, len, value }
}

/// Joins moves that continue one another into longer ones.
fn merged(moves: impl Iterator<Item = Move>) -> Vec<Move> {
    let mut out: Vec<Move> = Vec::new();
    for m in moves {
        match (out.last_mut(), m) {
            (
                Some(Move::Copy { src, dst, len }),
                Move::Copy {
                    src: s,
                    dst: d,
                    len: l,
                },
            ) if *src + *len == s && *dst + *len == d => *len += l,
            (
                Some(Move::Fill { dst, len, value }),
                Move::Fill {
                    dst: d,
                    len: l,
                    value: v,
                },
            ) if *dst + *len == d && *value == v => *len += l,
            _ => out.push(m),
        }
    }
    out
}

/// Lines grouped by destination row (channel, bank, row), rows in first-touch order.
fn by_destination_row(lines: &[Line]) -> Vec<Vec<Line>> {
    let mut order: Vec<Vec<Line>> = Vec::new();
    let mut index: HashMap<(u32, u32, u32), usize> = HashMap::new();
    for l in lines {
        let d = &l.dst.1;
        let key = (d.channel, d.bank_index, d.row);
        let i = *index.entry(key).or_insert_with(|| {
            order.push(Vec::new());
            order.len() - 1
        });
        order[i].push(*l);
    }
    order
}
