//! Rows RowClone sets aside: in every subarray its last row, kept all-zero so bulk zeroing is
//! one FPM copy from it; in every bank one temporary row (the second-to-last row of the last
//! subarray) that carries a copy between two subarrays of another bank (PSM twice). The
//! capacity they take is reported as `bulk.reserved_bytes`.

use crate::spec::Organisation;

#[derive(Clone, Copy, Debug)]
pub struct ReservedRows {
    rows: u32,
    rows_per_subarray: u32,
}

impl ReservedRows {
    pub fn new(o: &Organisation) -> ReservedRows {
        ReservedRows {
            rows: o.rows,
            rows_per_subarray: o.rows_per_subarray,
        }
    }

    /// The all-zero row of `subarray`.
    pub fn zero_row(&self, subarray: u32) -> u32 {
        subarray * self.rows_per_subarray + self.rows_per_subarray - 1
    }

    /// The temporary row of every bank.
    pub fn temp_row(&self) -> u32 {
        self.rows - 2
    }

    pub fn contains(&self, row: u32) -> bool {
        row % self.rows_per_subarray == self.rows_per_subarray - 1 || row == self.temp_row()
    }

    /// Reserved rows per bank.
    pub fn rows_per_bank(&self) -> u64 {
        (self.rows / self.rows_per_subarray) as u64 + 1
    }

    /// Bytes reserved in the whole memory.
    pub fn bytes(&self, o: &Organisation) -> u64 {
        self.rows_per_bank()
            * o.banks_per_rank() as u64
            * o.ranks as u64
            * o.channels as u64
            * o.row_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::presets::preset;

    #[test]
    fn one_zero_row_per_subarray_and_one_temp_row_per_bank() {
        let mut o = preset("DDR3_2Gb_x8_1066").unwrap().organisation;
        o.rows_per_subarray = 512;
        let r = ReservedRows::new(&o);
        assert_eq!((r.zero_row(0), r.zero_row(3)), (511, 2047));
        assert_eq!(r.temp_row(), o.rows - 2);
        assert!(r.contains(511) && r.contains(o.rows - 2) && !r.contains(510));
        assert!(!r.contains(r.temp_row() - 1));
        // 32K rows / 512 = 64 subarrays, + 1 temp row, x 8 banks x 8 KB rows.
        assert_eq!(r.bytes(&o), 65 * 8 * 8192);
    }
}
