//! The four named address mappings of the rank-assignment paper's Fig 5 (docs/rank_assignment.md,
//! "Mappings"), the split-field syntax they use (`Co2`), and existing field-order strings
//! decoding exactly as before. Every expected location is worked out by hand from the bit
//! layout of DDR4_8Gb_x8_2400 with 2 channels and 2 ranks: 64 B lines (6 offset bits), 128
//! bursts per row (7 column bits), 4 bank groups x 4 banks (4 bank bits, bank group lowest),
//! 65536 rows, 1 channel bit, 1 rank bit.

use bulksim_core::mapping::{AddressMapper, MAPPING_KEY};
use bulksim_core::spec::presets::preset;
use bulksim_core::spec::Organisation;
use bulksim_core::Config;

fn ddr4(channels: u32, ranks: u32) -> Organisation {
    let mut o = preset("DDR4_8Gb_x8_2400").unwrap().organisation;
    o.channels = channels;
    o.ranks = ranks;
    o
}

fn mapper(order: &str) -> AddressMapper {
    AddressMapper::new(&ddr4(2, 2), order, false).unwrap()
}

/// (channel, rank, bank group, bank, row, column) of `addr`.
fn at(m: &AddressMapper, addr: u64) -> (u32, u32, u32, u32, u32, u32) {
    let a = m.decode(addr);
    (a.channel, a.rank, a.bankgroup, a.bank, a.row, a.column)
}

#[test]
fn non_interleaved_keeps_a_page_in_one_row_of_one_bank() {
    // From low: 6 offset, 7 column (bits 6-12), channel (13), 4 bank (14-17), rank (18), row.
    let m = mapper("non_interleaved");
    for line in 0..64u64 {
        assert_eq!(at(&m, line * 64), (0, 0, 0, 0, 0, line as u32 * 8));
    }
    // An 8 KB row holds two pages; the third page goes to the other channel.
    assert_eq!(at(&m, 4096), (0, 0, 0, 0, 0, 512));
    assert_eq!(at(&m, 8192), (1, 0, 0, 0, 0, 0));
    assert_eq!(at(&m, 16384), (0, 0, 1, 0, 0, 0));
    // Row 5, rank 1, bank field 0b1011 (group 3, bank 2), channel 1, burst 100:
    // 5<<19 | 1<<18 | 11<<14 | 1<<13 | 100<<6 = 0x2EF900.
    assert_eq!(at(&m, 0x2E_F900), (1, 1, 3, 2, 5, 800));
}

#[test]
fn channel_interleaved_alternates_channels_line_by_line() {
    // From low: 6 offset, channel (6), 7 column (7-13), 4 bank (14-17), rank (18), row.
    let m = mapper("channel_interleaved");
    assert_eq!(at(&m, 0), (0, 0, 0, 0, 0, 0));
    assert_eq!(at(&m, 64), (1, 0, 0, 0, 0, 0));
    assert_eq!(at(&m, 128), (0, 0, 0, 0, 0, 8));
    // The last line of the first page: line 63, channel 1, burst 31.
    assert_eq!(at(&m, 4032), (1, 0, 0, 0, 0, 248));
    assert_eq!(at(&m, 1 << 14), (0, 0, 1, 0, 0, 0));
    assert_eq!(at(&m, 1 << 18), (0, 1, 0, 0, 0, 0));
    assert_eq!(at(&m, 1 << 19), (0, 0, 0, 0, 1, 0));
}

#[test]
fn bank_interleaved_puts_four_lines_in_each_bank_of_a_rank() {
    // From low: 6 offset, 2 column (6-7), 4 bank (8-11), 5 column (12-16), channel (17),
    // rank (18), row.
    let m = mapper("bank_interleaved");
    for line in 0..4u64 {
        assert_eq!(at(&m, line * 64), (0, 0, 0, 0, 0, line as u32 * 8));
    }
    // Line 4: the next bank (bank group first), column 0 again.
    assert_eq!(at(&m, 4 * 64), (0, 0, 1, 0, 0, 0));
    assert_eq!(at(&m, 8 * 64), (0, 0, 2, 0, 0, 0));
    assert_eq!(at(&m, 16 * 64), (0, 0, 0, 1, 0, 0));
    // Line 63: low column 3, bank field 15 (group 3, bank 3).
    assert_eq!(at(&m, 63 * 64), (0, 0, 3, 3, 0, 24));
    // The next page starts over at bank 0, at burst 4 (the upper column bits).
    assert_eq!(at(&m, 4096), (0, 0, 0, 0, 0, 32));
    assert_eq!(at(&m, 1 << 17), (1, 0, 0, 0, 0, 0));
    assert_eq!(at(&m, 1 << 18), (0, 1, 0, 0, 0, 0));
    assert_eq!(at(&m, 1 << 19), (0, 0, 0, 0, 1, 0));
    // A 4 KB page touches all 16 banks of one rank of one channel, 4 lines each.
    let mut per_bank = [0; 16];
    for line in 0..64u64 {
        let a = m.decode(3 * 4096 + line * 64);
        assert_eq!((a.channel, a.rank), (0, 0));
        per_bank[a.bank_index as usize] += 1;
    }
    assert_eq!(per_bank, [4; 16]);
    // Whole rows only above the top column bit (17): 16 banks x 8 KB.
    assert_eq!(m.mcgr_bytes(), 16 * 8192);
}

#[test]
fn bank_xor_permutes_the_bank_with_the_low_row_bits() {
    let m = mapper("bank_xor");
    // Differing only in the lowest row bit (bit 19): different banks.
    assert_eq!(at(&m, 0), (0, 0, 0, 0, 0, 0));
    assert_eq!(at(&m, 1 << 19), (0, 0, 1, 0, 1, 0));
    // Row 1 with bank field 1 lands in bank 0 (1 XOR 1).
    assert_eq!(at(&m, (1 << 19) | (1 << 8)), (0, 0, 0, 0, 1, 0));
    // Row 0x13 (low bits 0b0011) with bank field 0b0110: 0b0101, group 1, bank 1.
    assert_eq!(at(&m, (0x13 << 19) | (6 << 8)), (0, 0, 1, 1, 0x13, 0));
    // Otherwise the bank-interleaved layout: four lines per bank.
    assert_eq!(at(&m, 3 * 64), (0, 0, 0, 0, 0, 24));
    assert_eq!(at(&m, 4 * 64), (0, 0, 1, 0, 0, 0));
    assert_eq!(at(&m, 1 << 18), (0, 1, 0, 0, 0, 0));
    // bank_interleaved with controller.xor_bank is the same mapping.
    let with_xor = AddressMapper::new(&ddr4(2, 2), "bank_interleaved", true).unwrap();
    for addr in [1u64 << 19, (0x13 << 19) | (6 << 8), 0x2E_F900] {
        assert_eq!(at(&with_xor, addr), at(&m, addr));
    }
}

#[test]
fn named_mappings_are_their_field_orders() {
    for (name, order, xor) in [
        ("non_interleaved", "RoRaBaChCo", false),
        ("channel_interleaved", "RoRaBaCoCh", false),
        ("bank_interleaved", "RoRaChCoBaCo2", false),
        ("bank_xor", "RoRaChCoBaCo2", true),
    ] {
        let named = mapper(name);
        let spelled = AddressMapper::new(&ddr4(2, 2), order, xor).unwrap();
        for addr in [0u64, 64, 256, 4096, 0x2E_F900, 0x1234_5678, (1 << 35) - 64] {
            assert_eq!(
                named.decode(addr),
                spelled.decode(addr),
                "{name} at {addr:#x}"
            );
        }
    }
}

#[test]
fn split_mappings_visit_every_location_once_and_encode_inverts() {
    let mut o = ddr4(2, 2);
    o.rows = 4; // keep the enumeration small
    for order in [
        "bank_interleaved",
        "bank_xor",
        "RoCo3RaBaChCo",
        "RoBa1ChCoBgBaRa",
        "Ro1RaCoBaChRo",
    ] {
        let m = AddressMapper::new(&o, order, false).unwrap();
        let mut seen = std::collections::BTreeSet::new();
        for line in 0..m.capacity() / 64 {
            let a = m.decode(line * 64);
            assert!(
                seen.insert((a.channel, a.rank, a.bankgroup, a.bank, a.row, a.column)),
                "{order}: line {line} decodes to a location already taken"
            );
            assert_eq!(m.encode(&a), line * 64, "{order}: encode inverts decode");
        }
    }
}

#[test]
fn existing_field_orders_decode_as_before() {
    // RoBaRaCoCh, from low: 6 offset, channel (6), 7 column (7-13), rank (14),
    // 4 bank (15-18, group lowest), row (19).
    let m = mapper("RoBaRaCoCh");
    assert_eq!(at(&m, 64), (1, 0, 0, 0, 0, 0));
    assert_eq!(at(&m, 128 * 5), (0, 0, 0, 0, 0, 40));
    assert_eq!(at(&m, 1 << 14), (0, 1, 0, 0, 0, 0));
    assert_eq!(at(&m, 1 << 15), (0, 0, 1, 0, 0, 0));
    assert_eq!(at(&m, 1 << 17), (0, 0, 0, 1, 0, 0));
    // 0x2E_F900 bit by bit: bits 19-21 = 0b101 (row 5), bits 15-18 = 0b1101 (group 1, bank 3), bit 14 = 1 (rank 1),
    // bits 7-13 = 0b1110010 (burst 114), bit 6 = 0 (channel 0).
    assert_eq!(at(&m, 0x2E_F900), (0, 1, 1, 3, 5, 912));
    // RoBgBaRaCoCh: explicit bank group on top of 2 bank bits.
    let m = mapper("RoBgBaRaCoCh");
    assert_eq!(at(&m, 1 << 15), (0, 0, 0, 1, 0, 0));
    assert_eq!(at(&m, 1 << 17), (0, 0, 1, 0, 0, 0));
    // RoRaBaChCo is non_interleaved spelled out.
    let m = mapper("RoRaBaChCo");
    assert_eq!(at(&m, 0x2E_F900), (1, 1, 3, 2, 5, 800));
}

#[test]
fn bad_split_fields_name_the_key_and_the_problem() {
    let cases = [
        ("RoRaChCoBaCo9", "add up to 9"),    // more than the 7 column bits
        ("RoRaChCo2BaCo6", "add up to 8"),   // both parts counted, not 7
        ("RoRaChCoBaCo", "appears 2 times"), // neither part counted
        ("RoRaChCo1BaCo2Co", "appears 3 times"),
        ("RoRaChCoBaCo0", "not a positive number"),
        ("RoRaChCoBaCo99999999999", "not a positive number"),
        ("RoRaBaCoCh1", "add up to 1"), // one channel: no channel bit to give
        ("bank_xr", "unknown field"),
    ];
    for (order, problem) in cases {
        let e = AddressMapper::new(&ddr4(1, 2), order, false)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(MAPPING_KEY) && e.contains(problem),
            "{order}: {e}"
        );
    }
}

#[test]
fn config_accepts_the_names_and_rejects_a_misspelling() {
    for name in [
        "non_interleaved",
        "channel_interleaved",
        "bank_interleaved",
        "bank_xor",
    ] {
        let c = Config::default()
            .apply_sets(&[format!("controller.address_mapping={name}")])
            .unwrap();
        c.validate().unwrap();
    }
    let e = Config::default()
        .apply_sets(&["controller.address_mapping=bank_xr"])
        .and_then(|c| c.validate())
        .unwrap_err()
        .to_string();
    assert!(e.contains("controller.address_mapping"), "{e}");
    assert!(!e.contains('\n'), "one line: {e}");
}
