//! Ranks as the page allocators see them: the global rank numbering (a device's channels
//! follow the previous device's, and within a channel its ranks: global rank = first rank of
//! the channel + rank, which for one device is channel x ranks per channel + rank), the pool
//! key that groups frames by (channel, rank). (A mapping that splits a 4 KB page over ranks
//! is refused for the rank-aware policies by the config's checks.)

use super::FrameSite;

/// The pool of a rank: (channel, rank).
pub fn rank_key(s: &FrameSite) -> FrameSite {
    FrameSite {
        bank_index: 0,
        subarray: 0,
        ..*s
    }
}

/// Global rank numbers over all channels (of all devices).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankLayout {
    /// Per global channel, the global number of its rank 0; the total last.
    first_rank: Vec<u32>,
}

impl RankLayout {
    /// Channels in global order, each with its ranks.
    pub fn new(ranks_per_channel: &[u32]) -> RankLayout {
        let mut first_rank = vec![0];
        for &r in ranks_per_channel {
            first_rank.push(first_rank.last().unwrap() + r);
        }
        RankLayout { first_rank }
    }

    /// Ranks in all.
    pub fn count(&self) -> u32 {
        *self.first_rank.last().unwrap()
    }

    /// The global rank of a frame at `site`.
    #[inline]
    pub fn global(&self, site: &FrameSite) -> u32 {
        self.first_rank[site.channel as usize] + site.rank
    }

    /// The pool key (`rank_key`) of global rank `g`.
    pub fn key(&self, g: u32) -> FrameSite {
        let channel = self.first_rank.partition_point(|&f| f <= g) as u32 - 1;
        FrameSite {
            channel,
            rank: g - self.first_rank[channel as usize],
            bank_index: 0,
            subarray: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn global_ranks_number_channels_in_order_and_keys_invert_them() {
        let layout = RankLayout::new(&[2, 2, 4]);
        assert_eq!(layout.count(), 8);
        for g in 0..8 {
            let key = layout.key(g);
            assert_eq!(layout.global(&key), g);
        }
        assert_eq!((layout.key(3).channel, layout.key(3).rank), (1, 1));
        assert_eq!((layout.key(7).channel, layout.key(7).rank), (2, 3));
    }
}

/// Which bits of a device's frame numbers select the channel and rank, so that a frame's
/// index among its rank's frames (in physical order) is the frame number with those bits
/// taken out: `dram.rank_capacity_mb` keeps each rank's lowest indices.
#[derive(Clone, Copy, Debug)]
pub struct RankBits {
    mask: u64,
}

impl RankBits {
    /// The rank-selecting bits among the first `frames` (a power of two) of `mapper`.
    pub fn new(mapper: &crate::mapping::AddressMapper, frames: u64) -> RankBits {
        let mask = (0..frames.trailing_zeros())
            .filter(|&b| {
                let a = mapper.decode((1u64 << b) * super::PAGE);
                a.channel != 0 || a.rank != 0
            })
            .fold(0, |m, b| m | 1 << b);
        RankBits { mask }
    }

    /// `frame`'s index among its rank's frames, ascending with the frame number.
    #[inline]
    pub fn index_in_rank(&self, frame: u64) -> u64 {
        let (mut index, mut out_bit) = (0, 0);
        let mut rest = frame;
        let mut bit = 0;
        while rest != 0 {
            if self.mask >> bit & 1 == 0 {
                index |= (rest & 1) << out_bit;
                out_bit += 1;
            }
            rest >>= 1;
            bit += 1;
        }
        index
    }
}
