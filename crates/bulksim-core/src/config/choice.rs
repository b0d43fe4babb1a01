//! The one family every config choice belongs to (mechanisms, policies, modes): `config_enum!`
//! declares an enum whose values are names, and is the one place a value is turned into text
//! and back. Configs (TOML, `--set`), the resolved config, stats, errors and the generated docs
//! all read the name from here, so a value cannot be spelled two ways; a field's unit in
//! docs/config.md is its enum's `UNIT`, the names joined by " | ".

/// Declares a config enum, each value with its config name (and any older spellings still
/// accepted, after `|`):
///
/// ```ignore
/// config_enum! {
///     /// How copy and initialization requests execute.
///     pub enum Mechanism {
///         /// Over the channel.
///         Channel = "channel",
///         /// One rank at a time (`all_bank`: its name before issue 22).
///         Staggered = "staggered" | "all_bank",
///     }
/// }
/// ```
///
/// It emits the enum (`Clone, Copy, Debug, PartialEq, Eq`) and `ALL` (every value in
/// declaration order), `NAMES` (their names), `UNIT` (the names joined by " | "), `name()`,
/// `from_name()`, `Display`, and serde's `Serialize` / `Deserialize` as the name (an unknown
/// name is serde's "unknown variant `x`, expected one of ..." error, which the config loader
/// turns into a file-and-line or key error).
macro_rules! config_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $(
                $(#[$vmeta:meta])*
                $variant:ident = $text:literal $(| $alias:literal)*
            ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        $vis enum $name {
            $($(#[$vmeta])* $variant,)+
        }

        impl $name {
            /// Every value, in declaration order.
            #[allow(dead_code)]
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            /// Every value's config name, in declaration order.
            pub const NAMES: &'static [&'static str] = &[$($text),+];
            /// The names joined by " | ": the unit of a field holding this choice.
            #[allow(dead_code)]
            pub const UNIT: &'static str =
                $crate::config::choice::config_enum!(@unit $($text),+);

            /// The value's config name: the one spelling configs, stats, errors and docs use.
            pub fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }

            /// The value named `text` (its name or an older spelling).
            pub fn from_name(text: &str) -> Option<$name> {
                match text {
                    $($text $(| $alias)* => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.name())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<$name, D::Error> {
                struct Names;
                impl serde::de::Visitor<'_> for Names {
                    type Value = $name;
                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        write!(f, "one of {}", $name::UNIT)
                    }
                    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<$name, E> {
                        $name::from_name(v).ok_or_else(|| E::unknown_variant(v, $name::NAMES))
                    }
                }
                d.deserialize_str(Names)
            }
        }
    };
    (@unit $first:literal $(, $rest:literal)*) => {
        concat!($first $(, " | ", $rest)*)
    };
}

pub(crate) use config_enum;

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    config_enum! {
        /// A choice for the tests.
        pub enum Colour {
            /// The first.
            DarkRed = "dark_red" | "maroon",
            Blue = "blue",
        }
    }

    #[derive(Debug, Deserialize, serde::Serialize)]
    struct Holder {
        colour: Colour,
    }

    #[test]
    fn names_round_trip_and_aliases_read() {
        assert_eq!(Colour::UNIT, "dark_red | blue");
        assert_eq!(Colour::NAMES, &["dark_red", "blue"]);
        for &c in Colour::ALL {
            assert_eq!(Colour::from_name(c.name()), Some(c));
            assert_eq!(c.to_string(), c.name());
        }
        let h: Holder = toml::from_str("colour = \"maroon\"").unwrap();
        assert_eq!(h.colour, Colour::DarkRed);
        assert_eq!(toml::to_string(&h).unwrap().trim(), "colour = \"dark_red\"");
    }

    #[test]
    fn an_unknown_name_lists_the_names() {
        let e = toml::from_str::<Holder>("colour = \"green\"")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("unknown variant `green`, expected `dark_red` or `blue`"),
            "{e}"
        );
        let e = toml::from_str::<Holder>("colour = 3")
            .unwrap_err()
            .to_string();
        assert!(e.contains("expected one of dark_red | blue"), "{e}");
    }
}
