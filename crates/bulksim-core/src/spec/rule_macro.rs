//! The `rule!` macro that writes one timing rule per line in the standards' tables.

/// `rule!(Bank, [Act] -> [Rd, Wr], t.n_rcd)`; append `, window 4` or `, sibling`.
macro_rules! rule {
    ($level:ident, [$($p:ident),+] -> [$($f:ident),+], $lat:expr) => {
        $crate::spec::Rule {
            level: $crate::spec::Level::$level,
            preceding: &[$($crate::spec::Command::$p),+],
            following: &[$($crate::spec::Command::$f),+],
            latency: $lat,
            window: 0,
            sibling: false,
        }
    };
    ($level:ident, [$($p:ident),+] -> [$($f:ident),+], $lat:expr, window $w:expr) => {
        $crate::spec::Rule { window: $w, ..rule!($level, [$($p),+] -> [$($f),+], $lat) }
    };
    ($level:ident, [$($p:ident),+] -> [$($f:ident),+], $lat:expr, sibling) => {
        $crate::spec::Rule { sibling: true, ..rule!($level, [$($p),+] -> [$($f),+], $lat) }
    };
}
