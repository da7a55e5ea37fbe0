//! condense's integration tests: every component driven through the host,
//! the runtime and the proxy (the command line's are `condense-cli`'s). One binary, a module per
//! area (`cargo test -p condense-tests --test integration -- proxy::` runs
//! one area).

mod corpus;
mod dashboard;
mod docs;
mod host;
mod identifiers;
mod layout;
mod llm;
mod operator;
mod passes;
mod prepare;
mod properties;
mod provider;
mod proxy;
mod python_summarizer;
mod recall;
mod regressions;
mod rules;
mod runtime;
mod sdk;
mod survival;
mod trust;
