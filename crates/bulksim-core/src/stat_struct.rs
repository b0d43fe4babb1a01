//! `stat_struct!`: a stats struct declared one line per field, with the field's unit, its
//! description and how two parts' values combine, so that the docs table and the summing are
//! generated from the declaration rather than written (and kept in step) by hand.
//!
//! ```ignore
//! stat_struct! {
//!     /// Counters one controller accumulates.
//!     pub struct ControllerStats {
//!         /// Rust docs of the field, if any.
//!         pub reads: u64 = sum("requests", "read requests served"),
//!         pub last_done: u64 = max("memory cycles", "cycle of the last data beat"),
//!         pub hit_rate: f64 = derived("fraction", "hits / accesses"),
//!         pub preset: String = keep("name", "memory part simulated"),
//!         pub by_rank_nj: Vec<f64> = merge(extend, "nJ per rank", "energy of each rank"),
//!         pub read_latency: LatencyStats = nested(what = "read"),
//!         #[serde(flatten)]
//!         pub components: EnergyBreakdown = flatten(),
//!     }
//! }
//! ```
//!
//! Each field is `name: Type = how(...)`, `how` being one of
//!
//! - `sum(unit, description)`: `add` adds the other's value ([`StatSum`]: integers, `f64`,
//!   maps of summable values by key, stats structs);
//! - `max(unit, description)`: `add` keeps the larger value (ends of time, peaks);
//! - `merge(function, unit, description)`: `add` calls `function(&mut mine, &theirs)`
//!   (a histogram's merge, [`extend`] for per-part lists);
//! - `keep(unit, description)`: a setting every part shares (a preset name, a clock period);
//!   `add` leaves it as it is, so start a total from a clone of one part, not from `default()`;
//! - `derived(unit, description)`: computed from other fields (means, rates, percentiles);
//!   `add` leaves it as it is and the owner recomputes it;
//! - `nested(key = "value", ...)`: a stats struct declared with this macro, documented under
//!   `name.` and added field by field; `{key}` in its descriptions reads `value`;
//! - `flatten(key = "value", ...)`: the same, documented without the `name.` step (the field
//!   must carry `#[serde(flatten)]`, which the JSON-leaves tests check).
//!
//! The macro generates the struct (deriving Clone, Debug, Default, PartialEq and Serialize,
//! with the field's unit and description in its Rust docs), `add(&mut self, &Self)`,
//! `sub(&mut self, &Self)` (what changed since an earlier snapshot of the same counters:
//! `sum` fields and nested structs subtracted, a `merge` field by its optional
//! `sub = function`, written `merge(extend, sub = sub_each, unit, description)`; `max`, `keep`
//! and `derived` fields, and `merge` fields without one, stay as they are, for the owner to
//! recompute or to document as covering the whole run),
//! `stat_docs()` / `stat_docs_at(prefix)` (one [`FieldDoc`] per leaf, dotted paths as in the
//! JSON) and the [`StatStruct`] and [`StatSum`] impls through which stats structs nest.

use serde::Serialize;
use std::collections::BTreeMap;

/// Unit and description of one stat, from its declaration (dotted path as in the JSON).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FieldDoc {
    pub name: String,
    pub unit: &'static str,
    pub description: String,
}

/// A stats struct declared with `stat_struct!`: its docs table.
pub trait StatStruct {
    /// Appends one entry per leaf stat, named `prefix.field` (`field` when `prefix` is empty),
    /// with every `{key}` of a description replaced by the value `args` gives `key`.
    fn stat_docs_into(prefix: &str, args: &[(&str, &str)], out: &mut Vec<FieldDoc>);
}

/// A value that adds another part's value into itself (the `sum` fields).
pub trait StatSum {
    fn sum_from(&mut self, other: &Self);
}

macro_rules! sum_by_add {
    ($($t:ty),*) => {
        $(impl StatSum for $t {
            fn sum_from(&mut self, other: &Self) {
                *self += *other;
            }
        })*
    };
}
sum_by_add!(u64, u32, usize, f64);

/// Sums key by key (a key only one side has counts from zero).
impl<K: Ord + Clone, V: StatSum + Default> StatSum for BTreeMap<K, V> {
    fn sum_from(&mut self, other: &Self) {
        for (k, v) in other {
            self.entry(k.clone()).or_default().sum_from(v);
        }
    }
}

/// A value from which an earlier snapshot of it is taken away (the `sum` fields' `sub`).
pub trait StatSub {
    fn sub_from(&mut self, earlier: &Self);
}

macro_rules! sub_int {
    ($($t:ty),*) => {
        $(impl StatSub for $t {
            fn sub_from(&mut self, earlier: &Self) {
                *self = self.saturating_sub(*earlier);
            }
        })*
    };
}
sub_int!(u64, u32, usize);

impl StatSub for f64 {
    fn sub_from(&mut self, earlier: &Self) {
        *self -= *earlier;
    }
}

/// Key by key (a key the snapshot lacks is kept whole).
impl<K: Ord, V: StatSub> StatSub for BTreeMap<K, V> {
    fn sub_from(&mut self, earlier: &Self) {
        for (k, v) in self.iter_mut() {
            if let Some(e) = earlier.get(k) {
                v.sub_from(e);
            }
        }
    }
}

/// `sub` of a `merge` field holding one value per part (per rank): entry by entry.
pub fn sub_each<T: StatSub>(mine: &mut [T], earlier: &[T]) {
    for (m, e) in mine.iter_mut().zip(earlier) {
        m.sub_from(e);
    }
}

/// `max` fields: keeps the larger of the two.
pub fn max_from<T: PartialOrd + Clone>(mine: &mut T, theirs: &T) {
    if *theirs > *mine {
        *mine = theirs.clone();
    }
}

/// For `merge` of per-part lists (one entry per rank, per core): appends the other's.
pub fn extend<T: Clone>(mine: &mut Vec<T>, theirs: &[T]) {
    mine.extend_from_slice(theirs);
}

/// `prefix.name`, or `name` at the top.
pub fn path(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}.{name}")
    }
}

/// `text` with every `{key}` replaced by its value in `args`.
pub fn fill(text: &str, args: &[(&str, &str)]) -> String {
    let mut s = text.to_string();
    for (k, v) in args {
        s = s.replace(&format!("{{{k}}}"), v);
    }
    s
}

/// Appends the entry of one leaf stat.
pub fn leaf(
    out: &mut Vec<FieldDoc>,
    prefix: &str,
    args: &[(&str, &str)],
    name: &str,
    unit: &'static str,
    description: &str,
) {
    out.push(FieldDoc {
        name: path(prefix, name),
        unit,
        description: fill(description, args),
    });
}

/// Declares a stats struct; see the module docs for the syntax.
macro_rules! stat_struct {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $(
                $(#[$fmeta:meta])*
                $fvis:vis $field:ident : $fty:ty = $how:ident ( $($args:tt)* )
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, Default, PartialEq, ::serde::Serialize)]
        $vis struct $name {
            $(
                $(#[$fmeta])*
                #[doc = $crate::stat_struct::stat_struct!(@rustdoc $how $($args)*)]
                $fvis $field: $fty,
            )*
        }

        impl $name {
            /// Adds another part's stats: each field as its declaration says (`sum`, `max`,
            /// `merge`; `keep` and `derived` fields stay as they are).
            pub fn add(&mut self, other: &Self) {
                $($crate::stat_struct::stat_struct!(
                    @add $how (&mut self.$field, &other.$field) $($args)*
                );)*
            }

            /// Takes away an earlier snapshot of the same counters (see the module docs: `sum`
            /// fields and nested structs subtracted, the rest left for the owner).
            pub fn sub(&mut self, earlier: &Self) {
                $($crate::stat_struct::stat_struct!(
                    @sub $how (&mut self.$field, &earlier.$field) $($args)*
                );)*
            }

            /// Unit and description of every stat, from the declaration, in field order.
            pub fn stat_docs() -> Vec<$crate::stat_struct::FieldDoc> {
                Self::stat_docs_at("")
            }

            /// As `stat_docs`, the names under `prefix` (the struct's path in a larger record).
            pub fn stat_docs_at(prefix: &str) -> Vec<$crate::stat_struct::FieldDoc> {
                let mut out = Vec::new();
                <Self as $crate::stat_struct::StatStruct>::stat_docs_into(prefix, &[], &mut out);
                out
            }
        }

        impl $crate::stat_struct::StatStruct for $name {
            fn stat_docs_into(
                prefix: &str,
                args: &[(&str, &str)],
                out: &mut Vec<$crate::stat_struct::FieldDoc>,
            ) {
                let _ = (prefix, args, &out); // for structs without leaves or without `{key}`s
                $($crate::stat_struct::stat_struct!(
                    @doc $how $fty, out, prefix, args, stringify!($field), $($args)*
                );)*
            }
        }

        impl $crate::stat_struct::StatSum for $name {
            fn sum_from(&mut self, other: &Self) {
                self.add(other);
            }
        }

        impl $crate::stat_struct::StatSub for $name {
            fn sub_from(&mut self, earlier: &Self) {
                self.sub(earlier);
            }
        }
    };

    // How `sub` takes an earlier snapshot away from one field.
    (@sub sum ($a:expr, $b:expr) $($rest:tt)*) => {
        $crate::stat_struct::StatSub::sub_from($a, $b)
    };
    (@sub nested ($a:expr, $b:expr) $($rest:tt)*) => {
        $crate::stat_struct::StatSub::sub_from($a, $b)
    };
    (@sub flatten ($a:expr, $b:expr) $($rest:tt)*) => {
        $crate::stat_struct::StatSub::sub_from($a, $b)
    };
    (@sub merge ($a:expr, $b:expr) $f:path, sub = $g:path, $($rest:tt)*) => {
        $g($a, $b)
    };
    (@sub $how:ident ($a:expr, $b:expr) $($rest:tt)*) => {{
        let _ = ($a, $b);
    }};

    // How `add` combines one field.
    (@add sum ($a:expr, $b:expr) $($rest:tt)*) => {
        $crate::stat_struct::StatSum::sum_from($a, $b)
    };
    (@add max ($a:expr, $b:expr) $($rest:tt)*) => {
        $crate::stat_struct::max_from($a, $b)
    };
    (@add merge ($a:expr, $b:expr) $f:path, $($rest:tt)*) => {
        $f($a, $b)
    };
    (@add keep ($a:expr, $b:expr) $($rest:tt)*) => {{
        let _ = ($a, $b);
    }};
    (@add derived ($a:expr, $b:expr) $($rest:tt)*) => {{
        let _ = ($a, $b);
    }};
    (@add nested ($a:expr, $b:expr) $($rest:tt)*) => {
        $crate::stat_struct::StatSum::sum_from($a, $b)
    };
    (@add flatten ($a:expr, $b:expr) $($rest:tt)*) => {
        $crate::stat_struct::StatSum::sum_from($a, $b)
    };

    // The docs entries of one field.
    (@doc nested $ty:ty, $out:ident, $prefix:ident, $args:ident, $name:expr,
        $($key:ident = $val:expr),* $(,)?) => {
        <$ty as $crate::stat_struct::StatStruct>::stat_docs_into(
            &$crate::stat_struct::path($prefix, $name),
            &[$((stringify!($key), $crate::stat_struct::fill($val, $args).as_str())),*],
            $out,
        )
    };
    (@doc flatten $ty:ty, $out:ident, $prefix:ident, $args:ident, $name:expr,
        $($key:ident = $val:expr),* $(,)?) => {
        <$ty as $crate::stat_struct::StatStruct>::stat_docs_into(
            $prefix,
            &[$((stringify!($key), $crate::stat_struct::fill($val, $args).as_str())),*],
            $out,
        )
    };
    (@doc merge $ty:ty, $out:ident, $prefix:ident, $args:ident, $name:expr,
        $f:path, $(sub = $g:path,)? $unit:literal, $desc:literal $(,)?) => {
        $crate::stat_struct::leaf($out, $prefix, $args, $name, $unit, $desc)
    };
    (@doc $how:ident $ty:ty, $out:ident, $prefix:ident, $args:ident, $name:expr,
        $unit:literal, $desc:literal $(,)?) => {
        $crate::stat_struct::leaf($out, $prefix, $args, $name, $unit, $desc)
    };

    // The field's line in the Rust docs.
    (@rustdoc nested $($rest:tt)*) => {
        "Stats declared with `stat_struct!`, nested under this field's name."
    };
    (@rustdoc flatten $($rest:tt)*) => {
        "Stats declared with `stat_struct!`, flattened into this struct."
    };
    (@rustdoc merge $f:path, $(sub = $g:path,)? $unit:literal, $desc:literal $(,)?) => {
        concat!("Unit: ", $unit, ". ", $desc, " (merged by `", stringify!($f), "`).")
    };
    (@rustdoc $how:ident $unit:literal, $desc:literal $(,)?) => {
        concat!("Unit: ", $unit, ". ", $desc, " (`", stringify!($how), "`).")
    };
}
pub(crate) use stat_struct;

/// Dotted names of the leaves of a JSON object (the object named `opaque` counts as one
/// leaf), for tests that keep the stat tables in step with the stat structs.
#[cfg(test)]
fn json_leaves(v: &serde_json::Value, prefix: &str, opaque: &str, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) if prefix != opaque => {
            for (k, v) in m {
                let p = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                json_leaves(v, &p, opaque, out);
            }
        }
        _ => out.push(prefix.to_string()),
    }
}

/// A docs-table entry's stat name (hand-written `StatDoc` or generated `FieldDoc`).
#[cfg(test)]
pub(crate) trait DocName {
    fn doc_name(&self) -> &str;
}

#[cfg(test)]
impl DocName for FieldDoc {
    fn doc_name(&self) -> &str {
        &self.name
    }
}

/// Panics unless every leaf of `stats` (the object `opaque` as one leaf; one named in
/// `elsewhere` is documented in another table) has an entry in `docs` and every entry names a
/// leaf.
#[cfg(test)]
pub(crate) fn assert_documented(
    stats: &impl Serialize,
    opaque: &str,
    elsewhere: &[&str],
    docs: &[impl DocName],
    table: &str,
) {
    let mut keys = Vec::new();
    json_leaves(&serde_json::to_value(stats).unwrap(), "", opaque, &mut keys);
    keys.retain(|k| !elsewhere.contains(&k.as_str()));
    let names: Vec<&str> = docs.iter().map(|d| d.doc_name()).collect();
    for k in &keys {
        assert!(names.contains(&k.as_str()), "stat {k} has no {table} entry");
    }
    for n in &names {
        assert!(
            keys.iter().any(|k| k == n),
            "{table} names {n}, which is not a stat"
        );
    }
}

#[cfg(test)]
#[allow(dead_code)] // `Port::stat_docs` and the like
mod tests {
    use super::*;

    stat_struct! {
        /// Like a cache level's port: traffic split by cause.
        pub struct Port {
            pub read_bytes: u64 = sum("bytes", "{dir} bytes read"),
            pub write_bytes: u64 = sum("bytes", "{dir} bytes written"),
        }
    }

    stat_struct! {
        /// Like a level's stats: counters, an end time, a rate, per-part lists and ports.
        pub struct Level {
            pub name: String = keep("name", "level name"),
            pub hits: u64 = sum("accesses", "lookups that hit"),
            pub misses: u64 = sum("accesses", "lookups that missed"),
            pub last_fill_mem_cycles: u64 = max("memory cycles", "cycle of the last fill"),
            pub hit_rate: f64 = derived("fraction", "hits / (hits + misses)"),
            pub by_origin: BTreeMap<String, u64> = sum("bytes", "bytes by origin"),
            pub per_core_ns: Vec<f64> = merge(extend, "ns per core", "time of each core"),
            pub per_rank_nj: Vec<f64> = merge(extend, sub = sub_each, "nJ per rank", "energy of each rank"),
            pub below: Port = nested(dir = "downstream"),
            #[serde(flatten)]
            pub above: Port = flatten(dir = "upstream"),
        }
    }

    stat_struct! {
        pub struct Outer {
            pub l1: Level = nested(),
        }
    }

    #[test]
    fn docs_have_dotted_paths_and_filled_descriptions() {
        let names: Vec<String> = Outer::stat_docs().into_iter().map(|d| d.name).collect();
        assert_eq!(
            names,
            [
                "l1.name",
                "l1.hits",
                "l1.misses",
                "l1.last_fill_mem_cycles",
                "l1.hit_rate",
                "l1.by_origin",
                "l1.per_core_ns",
                "l1.per_rank_nj",
                "l1.below.read_bytes",
                "l1.below.write_bytes",
                "l1.read_bytes",
                "l1.write_bytes",
            ]
        );
        let docs = Level::stat_docs_at("cache.l2");
        let d = |n: &str| docs.iter().find(|d| d.name == n).unwrap().clone();
        assert_eq!(
            d("cache.l2.below.write_bytes"),
            FieldDoc {
                name: "cache.l2.below.write_bytes".into(),
                unit: "bytes",
                description: "downstream bytes written".into(),
            }
        );
        assert_eq!(d("cache.l2.read_bytes").description, "upstream bytes read");
        assert_eq!(d("cache.l2.last_fill_mem_cycles").unit, "memory cycles");
        // The docs name exactly the JSON's leaves (flatten included).
        let mut v = Level::default();
        v.by_origin.insert("copy".into(), 1);
        assert_documented(&v, "by_origin", &[], &Level::stat_docs(), "Level");
    }

    #[test]
    fn sub_takes_away_a_snapshot_as_each_declaration_says() {
        let snap = Level {
            name: "l1".into(),
            hits: 3,
            misses: 1,
            last_fill_mem_cycles: 400,
            hit_rate: 0.75,
            by_origin: [("copy".to_string(), 10)].into(),
            per_core_ns: vec![1.5],
            per_rank_nj: vec![1.0, 2.0],
            below: Port {
                read_bytes: 64,
                write_bytes: 0,
            },
            above: Port {
                read_bytes: 0,
                write_bytes: 128,
            },
        };
        let mut end = snap.clone();
        end.hits = 10;
        end.misses = 4;
        end.last_fill_mem_cycles = 900;
        end.hit_rate = 10.0 / 14.0;
        end.by_origin.insert("copy".into(), 25);
        end.by_origin.insert("init".into(), 7);
        end.per_core_ns = vec![4.0];
        end.per_rank_nj = vec![3.5, 2.0];
        end.below.read_bytes = 640;
        end.above.write_bytes = 256;
        let mut d = Outer { l1: end.clone() };
        d.sub(&Outer { l1: snap });
        let l = &d.l1;
        // Sums, maps key by key, nested and flattened structs: what happened in between.
        assert_eq!((l.hits, l.misses), (7, 3));
        assert_eq!(l.by_origin["copy"], 15);
        assert_eq!(l.by_origin["init"], 7);
        assert_eq!((l.below.read_bytes, l.above.write_bytes), (576, 128));
        assert_eq!(l.per_rank_nj, vec![2.5, 0.0]);
        // Ends, settings, derived values and merges without `sub`: as they were.
        assert_eq!(l.last_fill_mem_cycles, 900);
        assert_eq!(l.name, "l1");
        assert_eq!(l.hit_rate, end.hit_rate);
        assert_eq!(l.per_core_ns, vec![4.0]);
    }

    #[test]
    fn add_follows_each_declaration() {
        let part = |name: &str, hits, last, rate, origin: &str, ns| Level {
            name: name.into(),
            hits,
            misses: 1,
            last_fill_mem_cycles: last,
            hit_rate: rate,
            by_origin: [(origin.to_string(), 10)].into(),
            per_core_ns: vec![ns],
            per_rank_nj: vec![],
            below: Port {
                read_bytes: 64,
                write_bytes: 0,
            },
            above: Port {
                read_bytes: 0,
                write_bytes: 128,
            },
        };
        let mut a = Outer {
            l1: part("l1", 3, 900, 0.75, "copy", 1.5),
        };
        let b = Outer {
            l1: part("other", 5, 400, 0.1, "init", 2.5),
        };
        a.add(&b);
        let mut want = part("l1", 8, 900, 0.75, "copy", 1.5);
        want.misses = 2;
        want.by_origin.insert("init".into(), 10);
        want.per_core_ns.push(2.5);
        want.below.read_bytes = 128;
        want.above.write_bytes = 256;
        assert_eq!(a.l1, want);
        a.add(&b);
        assert_eq!(a.l1.by_origin["init"], 20);
    }
}
