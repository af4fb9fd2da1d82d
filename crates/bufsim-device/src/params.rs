//! Parameters of devices and schedulers: the shared registry shape (declared defaults and
//! ranges, typed readers for times, rates, sizes, counts and choices). A default is parsed by
//! the same code as a user's value, so it is written once, in the model's `INFO`.

pub use bufsim_config::registry::{parse_rate, parse_time_ns, Args, Capabilities, Info, Kind, Param, Range};
