//! Address mapping: a physical byte address to (channel, rank, bank group, bank, row, column),
//! by a field-order string read most- to least-significant (`RoBaRaCoCh`: row bits on top,
//! channel bits just above the line offset), with an optional XOR bank permutation (bank bits
//! XOR the low row bits, spreading row conflicts across banks). Without an explicit `Bg`
//! field, `Ba` covers bank group and bank with the bank-group bits lowest, so consecutive `Ba`
//! values alternate bank groups. A field may be split in two by giving one part an explicit bit
//! count (`RoRaChCoBaCo2`: the two low column bits below the bank bits, the rest above); the
//! lower part holds the field's low bits. The four named mappings of the rank-assignment paper's
//! Fig 5 (`NAMED_MAPPINGS`) resolve to such strings. Every count must be a power of two.
use crate::error::{config_err, Result};
use crate::spec::Organisation;

/// A decoded DRAM address, with the flat node indices the device uses precomputed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DramAddr {
    pub channel: u32,
    pub rank: u32,
    pub bankgroup: u32,
    pub bank: u32,
    /// `rank * bankgroups + bankgroup`.
    pub bankgroup_index: u32,
    /// `bankgroup_index * banks_per_group + bank`.
    pub bank_index: u32,
    pub row: u32,
    pub subarray: u32,
    /// Chip column address of the burst's first column.
    pub column: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    Channel,
    Rank,
    BankGroup,
    Bank,
    Row,
    Column,
}

/// One run of address bits holding bits `value_shift..` of a field's value.
#[derive(Clone, Copy, Debug)]
struct Slice {
    field: Field,
    shift: u32,
    mask: u64,
    value_shift: u32,
}

/// Where a field's value sits in the address: a low part and an optional high part (mask 0
/// when the field is not split), so decoding stays branch-free.
#[derive(Clone, Copy, Debug, Default)]
struct FieldBits {
    low_shift: u32,
    low_mask: u64,
    high_shift: u32,
    high_mask: u64,
    /// Width of the low part: where the high part's bits go in the value.
    low_width: u32,
}

impl FieldBits {
    #[inline]
    fn read(&self, addr: u64) -> u64 {
        ((addr >> self.low_shift) & self.low_mask)
            | (((addr >> self.high_shift) & self.high_mask) << self.low_width)
    }

    /// `read` for a field in one piece (no high part).
    #[inline]
    fn read_whole(&self, addr: u64) -> u64 {
        (addr >> self.low_shift) & self.low_mask
    }
}

/// The paper's Fig 5 mappings by name (docs/rank_assignment.md, "Mappings"): the field order
/// each resolves to and whether it XORs the bank bits with the low row bits.
pub const NAMED_MAPPINGS: &[(&str, &str, bool)] = &[
    // Line offset, then the whole row's columns: a 4 KB page stays in one row of one bank.
    ("non_interleaved", "RoRaBaChCo", false),
    // Consecutive lines alternate channels; a page stays in one rank.
    ("channel_interleaved", "RoRaBaCoCh", false),
    // Four lines (2 column bits) per bank, then the next bank of the same rank.
    ("bank_interleaved", "RoRaChCoBaCo2", false),
    ("bank_xor", "RoRaChCoBaCo2", true),
];

/// The field order and XOR flag a mapping name stands for, `None` for a field-order string.
pub fn named_mapping(name: &str) -> Option<(&'static str, bool)> {
    NAMED_MAPPINGS
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|&(_, order, xor)| (order, xor))
}

#[derive(Clone, Debug)]
pub struct AddressMapper {
    slices: Vec<Slice>,
    /// Per field in `Field` order, masks 0 for an absent field: decoding reads every field
    /// with shifts and ands, no loop or branch (it runs once per request).
    by_field: [FieldBits; 6],
    /// Some field is split in two (`Co2`): decoding reads high parts too. Without, the
    /// cheaper whole-field read keeps trace replay at its former cost per request.
    split: bool,
    xor_bank: bool,
    explicit_bg: bool,
    bg_bits: u32,
    bank_field_mask: u64,
    bankgroups: u32,
    banks_per_group: u32,
    burst_length: u32,
    rows_per_subarray: u32,
    capacity: u64,
    line_bytes: u64,
    mcgr: u64,
}

pub const MAPPING_KEY: &str = "controller.address_mapping";

fn log2_exact(n: u32, key: &str) -> Result<u32> {
    if n == 0 || !n.is_power_of_two() {
        return Err(config_err(format!(
            "{key}: {n} is not a power of two (address mapping needs one)"
        )));
    }
    Ok(n.trailing_zeros())
}

/// What a mapping string may be, quoted by every error about one.
const MAPPING_EXPECTED: &str = "a mapping name (non_interleaved, channel_interleaved, bank_interleaved, bank_xor) or each of Ch, Ra, Ba, Ro, Co once, optionally Bg, most significant first (e.g. RoBaRaCoCh); a field may appear twice if one part gives its bit count (e.g. RoRaChCoBaCo2)";

/// One part of a field-order string: the field, its explicit bit count if given, and its
/// two-letter name (for errors).
type OrderPart<'a> = (Field, Option<u32>, &'a str);

/// Bit widths of the fields of an organisation (log2 of each count).
struct FieldWidths {
    channel: u32,
    rank: u32,
    bankgroup: u32,
    bank: u32,
    row: u32,
    column: u32,
}

impl FieldWidths {
    fn of(org: &Organisation) -> Result<FieldWidths> {
        Ok(FieldWidths {
            channel: log2_exact(org.channels, "dram.channels")?,
            rank: log2_exact(org.ranks, "dram.ranks")?,
            bankgroup: log2_exact(org.bankgroups, "bank groups of the preset")?,
            bank: log2_exact(org.banks_per_group, "banks per group of the preset")?,
            row: log2_exact(org.rows, "rows of the preset")?,
            column: log2_exact(org.columns / org.burst_length, "columns / burst length")?,
        })
    }

    /// A field's width; without an explicit `Bg` field, `Ba` covers the bank-group bits too.
    fn of_field(&self, f: Field, explicit_bg: bool) -> u32 {
        match f {
            Field::Channel => self.channel,
            Field::Rank => self.rank,
            Field::BankGroup => self.bankgroup,
            Field::Bank if explicit_bg => self.bank,
            Field::Bank => self.bank + self.bankgroup,
            Field::Row => self.row,
            Field::Column => self.column,
        }
    }
}

/// Splits a field-order string into its parts, most significant first.
fn parse_order(order: &str) -> Result<Vec<OrderPart<'_>>> {
    let expected = MAPPING_EXPECTED;
    let mut fields: Vec<OrderPart> = Vec::new();
    let bytes = order.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let name = order.get(i..i + 2).ok_or_else(|| {
            config_err(format!(
                "{MAPPING_KEY}: '{order}' is not a sequence of two-letter fields; expected {expected}"
            ))
        })?;
        let f = match name {
            "Ch" => Field::Channel,
            "Ra" => Field::Rank,
            "Bg" => Field::BankGroup,
            "Ba" => Field::Bank,
            "Ro" => Field::Row,
            "Co" => Field::Column,
            other => {
                return Err(config_err(format!(
                    "{MAPPING_KEY}: unknown field '{other}' in '{order}'; expected {expected}"
                )))
            }
        };
        let digits_end = i
            + 2
            + bytes[i + 2..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
        let count = if digits_end > i + 2 {
            let text = &order[i + 2..digits_end];
            match text.parse::<u32>() {
                Ok(n) if n > 0 => Some(n),
                _ => {
                    return Err(config_err(format!(
                        "{MAPPING_KEY}: bit count '{text}' of '{name}' in '{order}' is not a positive number; expected {expected}"
                    )))
                }
            }
        } else {
            None
        };
        fields.push((f, count, name));
        i = digits_end;
    }
    Ok(fields)
}

/// Each part's bit count: given, or the rest of the field's width; a field in more than two
/// parts, or whose counts do not add up to its width, is an error.
fn part_bit_counts(
    fields: &[OrderPart],
    order: &str,
    width: impl Fn(Field) -> u32,
) -> Result<Vec<u32>> {
    let expected = MAPPING_EXPECTED;
    let mut part_bits = Vec::with_capacity(fields.len());
    for &(f, count, name) in fields {
        let parts: Vec<Option<u32>> = fields
            .iter()
            .filter(|&&(g, _, _)| g == f)
            .map(|&(_, c, _)| c)
            .collect();
        let given = parts
            .iter()
            .flatten()
            .fold(0u32, |sum, &c| sum.saturating_add(c));
        let uncounted = parts.iter().filter(|c| c.is_none()).count();
        if parts.len() > 2 || (parts.len() == 2 && uncounted == 2) {
            return Err(config_err(format!(
                "{MAPPING_KEY}: field '{name}' appears {} times in '{order}' (at most twice, one part with a bit count); expected {expected}",
                parts.len()
            )));
        }
        let fits = if uncounted == 1 {
            given <= width(f)
        } else {
            given == width(f)
        };
        if !fits {
            return Err(config_err(format!(
                "{MAPPING_KEY}: the bit counts of '{name}' in '{order}' add up to {given} but the field has {} bits; expected {expected}",
                width(f)
            )));
        }
        part_bits.push(count.unwrap_or(width(f) - given));
    }
    Ok(part_bits)
}

/// Every field but the bank group must appear in the order.
fn check_required_fields(fields: &[OrderPart], order: &str) -> Result<()> {
    for needed in [
        Field::Channel,
        Field::Rank,
        Field::Bank,
        Field::Row,
        Field::Column,
    ] {
        if !fields.iter().any(|&(f, _, _)| f == needed) {
            return Err(config_err(format!(
                "{MAPPING_KEY}: '{order}' lacks a field; expected {MAPPING_EXPECTED}"
            )));
        }
    }
    Ok(())
}

/// The address bit runs of the parts, from the least significant part up (above the line
/// offset), so a split field's lower part takes its low bits.
fn lay_out_slices(fields: &[OrderPart], part_bits: &[u32], offset_bits: u32) -> Vec<Slice> {
    let mut slices: Vec<Slice> = Vec::new();
    let mut shift = offset_bits;
    for (&(f, _, _), &bits) in fields.iter().zip(part_bits).rev() {
        let value_shift = slices
            .iter()
            .filter(|s| s.field == f)
            .map(|s| s.mask.count_ones())
            .sum();
        slices.push(Slice {
            field: f,
            shift,
            mask: (1u64 << bits) - 1,
            value_shift,
        });
        shift += bits;
    }
    slices
}

/// The slices regrouped per field (low and high part), for branch-free decoding.
fn field_bits_table(slices: &[Slice]) -> [FieldBits; 6] {
    let mut by_field = [FieldBits::default(); 6];
    for sl in slices {
        let bits = &mut by_field[sl.field as usize];
        if sl.value_shift == 0 {
            (bits.low_shift, bits.low_mask) = (sl.shift, sl.mask);
            bits.low_width = sl.mask.count_ones();
        } else {
            (bits.high_shift, bits.high_mask) = (sl.shift, sl.mask);
        }
    }
    by_field
}

impl AddressMapper {
    pub fn new(org: &Organisation, order: &str, xor_bank: bool) -> Result<AddressMapper> {
        let widths = FieldWidths::of(org)?;
        let line_bytes = org.line_bytes();
        let offset_bits = log2_exact(line_bytes as u32, "line size")?;
        let (order, xor_bank) = match named_mapping(order) {
            Some((named_order, named_xor)) => (named_order, named_xor || xor_bank),
            None => (order, xor_bank),
        };
        let fields = parse_order(order)?;
        let explicit_bg = fields.iter().any(|&(f, _, _)| f == Field::BankGroup);
        let part_bits = part_bit_counts(&fields, order, |f| widths.of_field(f, explicit_bg))?;
        check_required_fields(&fields, order)?;
        let slices = lay_out_slices(&fields, &part_bits, offset_bits);
        // Minimum copy granularity: the column field's top bit bounds the smallest aligned range
        // that holds whole rows (of every bank and channel interleaved below it).
        let column_top = slices
            .iter()
            .filter(|s| s.field == Field::Column)
            .map(|s| s.shift + s.mask.count_ones())
            .max()
            .expect("column field");
        let mcgr = 1u64 << column_top;
        let by_field = field_bits_table(&slices);
        let split = by_field.iter().any(|b| b.high_mask != 0);
        Ok(AddressMapper {
            mcgr,
            split,
            slices,
            by_field,
            xor_bank,
            explicit_bg,
            bg_bits: widths.bankgroup,
            bank_field_mask: (1u64 << (widths.bankgroup + widths.bank)) - 1,
            bankgroups: org.bankgroups,
            banks_per_group: org.banks_per_group,
            burst_length: org.burst_length,
            rows_per_subarray: org.rows_per_subarray,
            capacity: org.total_bytes(),
            line_bytes,
        })
    }

    /// Total bytes addressable; higher address bits are ignored by `decode`.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    pub fn line_bytes(&self) -> u64 {
        self.line_bytes
    }

    /// RowClone's minimum copy granularity (MCGR) in bytes: the smallest aligned address range
    /// that covers whole rows under this mapping (row size x channels for `RoBaRaCoCh`).
    pub fn mcgr_bytes(&self) -> u64 {
        self.mcgr
    }

    /// The decoded form of a location given by its coordinates (bank within its group).
    #[inline]
    pub fn locate(
        &self,
        channel: u32,
        rank: u32,
        bankgroup: u32,
        bank: u32,
        row: u32,
        column: u32,
    ) -> DramAddr {
        let bankgroup_index = rank * self.bankgroups + bankgroup;
        DramAddr {
            channel,
            rank,
            bankgroup,
            bank,
            bankgroup_index,
            bank_index: bankgroup_index * self.banks_per_group + bank,
            row,
            subarray: row / self.rows_per_subarray,
            column,
        }
    }

    /// The byte address of a location's first byte: the inverse of `decode` below capacity.
    pub fn encode(&self, a: &DramAddr) -> u64 {
        let mut all_banks = ((a.bank as u64) << self.bg_bits) | a.bankgroup as u64;
        if self.xor_bank {
            all_banks ^= a.row as u64 & self.bank_field_mask;
        }
        let (bg, ba) = if self.explicit_bg {
            (
                all_banks & ((1 << self.bg_bits) - 1),
                all_banks >> self.bg_bits,
            )
        } else {
            (0, all_banks)
        };
        let mut addr = 0;
        for s in &self.slices {
            let v = match s.field {
                Field::Channel => a.channel as u64,
                Field::Rank => a.rank as u64,
                Field::BankGroup => bg,
                Field::Bank => ba,
                Field::Row => a.row as u64,
                Field::Column => (a.column / self.burst_length) as u64,
            };
            addr |= ((v >> s.value_shift) & s.mask) << s.shift;
        }
        addr
    }

    /// The channel of `addr` alone (what `decode` would give), for a cheap queue-space check.
    #[inline]
    pub fn channel_of(&self, addr: u64) -> u32 {
        self.by_field[Field::Channel as usize].read(addr) as u32
    }

    #[inline]
    pub fn decode(&self, addr: u64) -> DramAddr {
        if self.split {
            self.decode_with(addr, FieldBits::read)
        } else {
            self.decode_with(addr, FieldBits::read_whole)
        }
    }

    #[inline(always)]
    fn decode_with(&self, addr: u64, read: impl Fn(&FieldBits, u64) -> u64) -> DramAddr {
        let field = |f: Field| read(&self.by_field[f as usize], addr);
        let (ch, ra, bg, ba, ro, co) = (
            field(Field::Channel),
            field(Field::Rank),
            field(Field::BankGroup),
            field(Field::Bank),
            field(Field::Row),
            field(Field::Column),
        );
        // Without an explicit Bg field, `ba` holds bank group (low bits) and bank together; with
        // one, rebuild that combined form so the XOR permutation treats both alike.
        let mut all_banks = if self.explicit_bg {
            (ba << self.bg_bits) | bg
        } else {
            ba
        };
        if self.xor_bank {
            all_banks ^= ro & self.bank_field_mask;
        }
        let bankgroup = (all_banks & ((1 << self.bg_bits) - 1)) as u32;
        let bank = (all_banks >> self.bg_bits) as u32;
        self.locate(
            ch as u32,
            ra as u32,
            bankgroup,
            bank,
            ro as u32,
            co as u32 * self.burst_length,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::presets::preset;

    fn ddr4(channels: u32, ranks: u32) -> Organisation {
        let mut o = preset("DDR4_8Gb_x8_2400").unwrap().organisation;
        o.channels = channels;
        o.ranks = ranks;
        o
    }

    #[test]
    fn robarachco_puts_channel_lowest_and_row_highest() {
        let m = AddressMapper::new(&ddr4(2, 2), "RoBaRaCoCh", false).unwrap();
        assert_eq!(m.decode(0).channel, 0);
        assert_eq!(m.decode(64).channel, 1);
        // Next: 7 column bits (128 bursts of 8 columns).
        assert_eq!(m.decode(128).column, 8);
        assert_eq!(m.decode(128 << 7).rank, 1);
        // Then Ba: bank group bits first.
        let a = m.decode(128 << 8);
        assert_eq!((a.bankgroup, a.bank), (1, 0));
        let a = m.decode(128 << 10);
        assert_eq!((a.bankgroup, a.bank), (0, 1));
        assert_eq!(m.decode(128 << 12).row, 1);
        assert_eq!(m.capacity(), 2 * 2 * 8 * (1u64 << 30));
    }

    #[test]
    fn every_line_of_capacity_maps_to_a_distinct_location() {
        let mut o = ddr4(2, 2);
        o.rows = 4; // keep the enumeration small
        for order in ["RoBaRaCoCh", "RoRaBaChCo", "ChRaBaRoCo", "RoCoBgBaRaCh"] {
            for xor in [false, true] {
                let m = AddressMapper::new(&o, order, xor).unwrap();
                let mut seen = std::collections::HashSet::new();
                for line in 0..m.capacity() / 64 {
                    let a = m.decode(line * 64);
                    assert!(
                        seen.insert((a.channel, a.rank, a.bankgroup, a.bank, a.row, a.column)),
                        "{order} xor={xor}"
                    );
                    assert_eq!(m.encode(&a), line * 64, "{order} xor={xor}: encode inverts");
                    let b = m.locate(a.channel, a.rank, a.bankgroup, a.bank, a.row, a.column);
                    assert_eq!(a, b, "{order} xor={xor}: locate rebuilds the indices");
                }
            }
        }
    }

    #[test]
    fn minimum_copy_granularity_follows_the_interleaving() {
        // 8 KB rows (1K columns x 8 B); two channels below the columns: 16 KB.
        let m = AddressMapper::new(&ddr4(2, 2), "RoBaRaCoCh", false).unwrap();
        assert_eq!(m.mcgr_bytes(), 2 * 8192);
        // Banks, ranks and channels interleaved below the columns: every row of the channel set.
        let m = AddressMapper::new(&ddr4(2, 2), "RoCoBaRaCh", false).unwrap();
        assert_eq!(m.mcgr_bytes(), 8192 * 16 * 2 * 2);
        let m = AddressMapper::new(&ddr4(1, 1), "RoBaRaCoCh", false).unwrap();
        assert_eq!(m.mcgr_bytes(), 8192);
    }

    #[test]
    fn xor_permutes_banks_by_row() {
        let m = AddressMapper::new(&ddr4(1, 1), "RoBaRaCoCh", true).unwrap();
        let a = m.decode(1u64 << (6 + 7 + 4)); // row 1, bank field 0
        assert_eq!((a.row, a.bankgroup, a.bank), (1, 1, 0));
    }

    #[test]
    fn bad_orders_name_the_key() {
        for bad in ["RoBaRaCo", "RoBaRaCoCx", "RoRoBaRaCoCh", "RoBaRaCoC"] {
            let e = AddressMapper::new(&ddr4(1, 1), bad, false)
                .unwrap_err()
                .to_string();
            assert!(e.contains(MAPPING_KEY), "{e}");
        }
        let e = AddressMapper::new(&ddr4(3, 1), "RoBaRaCoCh", false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("dram.channels"), "{e}");
    }
}
