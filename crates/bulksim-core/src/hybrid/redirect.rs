//! ACCESSREDIRECT (Fig. 4 of the paper; issue 17 item 7): where one LLC miss or write-back
//! of a block is served, given its home page and the ART entry keyed by that page, if any.
//! It owns only the decision; the router carries it out (queues the reads and writes,
//! orders a later read behind a pending copy write, drops stale copies).

use super::art::{Art, ArtEntry, Direction};
use super::Frame;

/// What reached the memory controller from the LLC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// A miss: the LLC waits for the block.
    Read,
    /// A dirty line leaving the LLC: the newest data of its block.
    WriteBack,
}

/// Where an access is served and what it does to the entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Redirect {
    /// Serve the access at this frame; the entry (if any) is unchanged.
    Serve(Frame),
    /// Set the block's bit, then serve the access at this frame: a write-back to a
    /// migrating page goes to the destination, which then holds the newest data.
    SetBitServe(Frame),
    /// On-demand copy of a promoting block: set its bit, read it at `read` (the LLC waits
    /// for this read only) and write the same data to `copy_to` off the critical path.
    ReadAndCopy { read: Frame, copy_to: Frame },
}

impl Redirect {
    /// The frame the requester's own access goes to.
    pub fn served_at(self) -> Frame {
        match self {
            Redirect::Serve(f) | Redirect::SetBitServe(f) => f,
            Redirect::ReadAndCopy { read, .. } => read,
        }
    }

    /// Whether the decision sets the block's bit.
    pub fn sets_bit(self) -> bool {
        !matches!(self, Redirect::Serve(_))
    }
}

/// The decision for `kind` on block `block` (0..64) of the page whose home frame is `home`,
/// `entry` being the ART entry keyed by `home.page`, if the page is migrating.
///
/// As issue 17 corrects Fig. 4, the decision branches on the entry's direction, not on
/// whether the address lies in the PCM range: after a partial demotion flips an entry
/// (item 9) the key is still the PCM home, yet the blocks move DRAM -> PCM. Taking frames
/// from the entry's `src` and `dest` (rather than the accessed address) lets the same six
/// cases serve a flipped entry and a DRAM-homed demotion alike.
#[inline]
pub fn access_redirect(
    entry: Option<&ArtEntry>,
    home: Frame,
    kind: Access,
    block: u32,
) -> Redirect {
    let Some(e) = entry else {
        // Not migrating: the page is where its address says.
        return Redirect::Serve(home);
    };
    debug_assert_eq!(e.key, home.page, "ART entry of another page");
    let copied = e.is_copied(block);
    match (e.direction, kind) {
        (_, Access::WriteBack) => Redirect::SetBitServe(e.dest_frame()),
        (_, Access::Read) if copied => Redirect::Serve(e.dest_frame()),
        // Not yet in DRAM: read it from PCM for the LLC and copy it on the way (OBM).
        (Direction::Promoting, Access::Read) => Redirect::ReadAndCopy {
            read: e.src_frame(),
            copy_to: e.dest_frame(),
        },
        // Demotions never copy on demand (cold pages): the DRAM frame still holds it.
        (Direction::Demoting, Access::Read) => Redirect::Serve(e.src_frame()),
    }
}

/// The per-access path of the router: one ART lookup keyed by the home page, the decision,
/// and the bit set it asks for. No allocation.
#[inline]
pub fn redirect(art: &mut Art, home: Frame, kind: Access, block: u32) -> Redirect {
    let Some(id) = art.lookup(home.page) else {
        return Redirect::Serve(home);
    };
    let r = access_redirect(Some(art.entry(id)), home, kind, block);
    if r.sets_bit() {
        art.set_bit(id, block);
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hybrid::art::Direction::{Demoting, Promoting};
    use Access::{Read, WriteBack};

    const PCM_HOME: u64 = 1000;
    const DRAM_FRAME: u64 = 7;

    fn entry(direction: Direction, key: u64, src: u64, dest: u64, copied: u64) -> ArtEntry {
        ArtEntry {
            key,
            src,
            dest,
            direction,
            copied,
        }
    }

    /// Promoting PCM page 1000 to DRAM frame 7, block 3 copied.
    fn promoting() -> ArtEntry {
        entry(Promoting, PCM_HOME, PCM_HOME, DRAM_FRAME, 1 << 3)
    }

    /// Demoting DRAM-homed page 7 to PCM frame 1000, block 3 copied.
    fn demoting() -> ArtEntry {
        entry(Demoting, DRAM_FRAME, DRAM_FRAME, PCM_HOME, 1 << 3)
    }

    #[test]
    fn no_entry_pcm_page_is_served_by_pcm() {
        let home = Frame::pcm(PCM_HOME);
        for kind in [Read, WriteBack] {
            assert_eq!(access_redirect(None, home, kind, 0), Redirect::Serve(home));
        }
    }

    #[test]
    fn no_entry_dram_page_is_served_by_dram() {
        let home = Frame::dram(DRAM_FRAME);
        for kind in [Read, WriteBack] {
            assert_eq!(access_redirect(None, home, kind, 9), Redirect::Serve(home));
        }
    }

    #[test]
    fn promoting_read_of_a_copied_block_goes_to_the_dram_dest() {
        let e = promoting();
        let r = access_redirect(Some(&e), Frame::pcm(PCM_HOME), Read, 3);
        assert_eq!(r, Redirect::Serve(Frame::dram(DRAM_FRAME)));
        assert!(!r.sets_bit());
    }

    #[test]
    fn promoting_read_of_an_uncopied_block_reads_pcm_then_copies_to_dram() {
        let e = promoting();
        let r = access_redirect(Some(&e), Frame::pcm(PCM_HOME), Read, 4);
        assert_eq!(
            r,
            Redirect::ReadAndCopy {
                read: Frame::pcm(PCM_HOME),
                copy_to: Frame::dram(DRAM_FRAME),
            }
        );
        assert!(r.sets_bit());
        assert_eq!(r.served_at(), Frame::pcm(PCM_HOME));
    }

    #[test]
    fn promoting_write_back_sets_the_bit_and_writes_the_dram_dest() {
        let e = promoting();
        // Whatever the bit: the LLC holds the newest data.
        for block in [3, 4] {
            let r = access_redirect(Some(&e), Frame::pcm(PCM_HOME), WriteBack, block);
            assert_eq!(r, Redirect::SetBitServe(Frame::dram(DRAM_FRAME)));
        }
    }

    #[test]
    fn demoting_read_of_a_copied_block_goes_to_the_pcm_dest() {
        let e = demoting();
        let r = access_redirect(Some(&e), Frame::dram(DRAM_FRAME), Read, 3);
        assert_eq!(r, Redirect::Serve(Frame::pcm(PCM_HOME)));
    }

    #[test]
    fn demoting_read_of_an_uncopied_block_goes_to_the_src_without_a_copy() {
        let e = demoting();
        let r = access_redirect(Some(&e), Frame::dram(DRAM_FRAME), Read, 4);
        assert_eq!(r, Redirect::Serve(Frame::dram(DRAM_FRAME)));
        assert!(!r.sets_bit());
    }

    #[test]
    fn demoting_write_back_sets_the_bit_and_writes_the_pcm_dest() {
        let e = demoting();
        for block in [3, 4] {
            let r = access_redirect(Some(&e), Frame::dram(DRAM_FRAME), WriteBack, block);
            assert_eq!(r, Redirect::SetBitServe(Frame::pcm(PCM_HOME)));
        }
    }

    /// The case Fig. 4's address-range test gets wrong: a flipped entry keyed by the PCM
    /// home demotes, so an unreturned block is read from the DRAM frame, not the PCM home.
    #[test]
    fn a_flipped_entry_is_redirected_by_its_direction_not_its_address() {
        let mut art = Art::new(512, 32).unwrap();
        let id = art
            .insert(PCM_HOME, PCM_HOME, DRAM_FRAME, Promoting)
            .unwrap();
        art.set_bit(id, 3); // block 3 promoted
        art.flip(id);
        let home = Frame::pcm(PCM_HOME);
        let e = *art.entry(id);
        // Block 3 lives only in DRAM until copied back.
        assert_eq!(
            access_redirect(Some(&e), home, Read, 3),
            Redirect::Serve(Frame::dram(DRAM_FRAME))
        );
        // Block 4 was never promoted: PCM is current.
        assert_eq!(
            access_redirect(Some(&e), home, Read, 4),
            Redirect::Serve(home)
        );
        assert_eq!(
            access_redirect(Some(&e), home, WriteBack, 3),
            Redirect::SetBitServe(home)
        );
    }

    #[test]
    fn redirect_looks_up_decides_then_sets_the_bit() {
        let mut art = Art::new(512, 32).unwrap();
        let home = Frame::pcm(PCM_HOME);
        assert_eq!(redirect(&mut art, home, Read, 0), Redirect::Serve(home));
        let id = art
            .insert(PCM_HOME, PCM_HOME, DRAM_FRAME, Promoting)
            .unwrap();
        // The first read of block 0 copies it; the second finds it in DRAM.
        assert!(matches!(
            redirect(&mut art, home, Read, 0),
            Redirect::ReadAndCopy { .. }
        ));
        assert!(art.entry(id).is_copied(0));
        assert_eq!(
            redirect(&mut art, home, Read, 0),
            Redirect::Serve(Frame::dram(DRAM_FRAME))
        );
        redirect(&mut art, home, WriteBack, 1);
        assert!(art.entry(id).is_copied(1));
        assert_eq!((art.stats.lookups, art.stats.bit_updates), (4, 2));
    }
}
