//! The guest SDK as a third party uses it: its example summarizer
//! (`guest/examples/summarizer-minimal`, written with `condense-guest-sdk`
//! only) loaded by the host from a path, its settings read into its own
//! type, and `condense summarize` trying summarizers out with one binary.

use condense_host::{ComponentSource, Compressed, Limits, Middleware, Runtime, Status};
use condense_model::tokens::estimate_text;
use condense_model::{Role, SummaryRequest};
use condense_tests::{config_40k, guests, next_compaction, session, summary_of};

fn minimal_runtime() -> Runtime {
    Runtime::new(
        Limits::default(),
        ComponentSource::Embedded(condense_embedded::COMPRESSOR),
        ComponentSource::Path(guests::SUMMARIZER_MINIMAL.into()),
    )
    .unwrap_or_else(|e| panic!("{e:#}"))
}

fn minimal() -> Middleware {
    Middleware::new(minimal_runtime())
}

/// The first compaction of cc-opus-c at 40k through `middleware`.
fn first_compaction(middleware: &Middleware) -> Compressed {
    next_compaction(middleware, &config_40k(), &session("cc-opus-c"), 1, None)
        .expect("cc-opus-c compacts at 40k")
        .1
}

/// The summary of the first compaction of cc-opus-c at 40k.
fn first_summary(middleware: &Middleware) -> String {
    summary_of(first_compaction(middleware).checkpoint.as_ref().unwrap())
}

/// The compressor asks for a summary with no settings; the host hands the
/// summarizer the ones its configuration has for it.
#[test]
fn the_hosts_settings_for_a_summarizer_reach_it_through_compress() {
    let configured = Middleware::new(
        minimal_runtime().with_summarizer_settings(0, r#"{"heading": "Configured:"}"#.into()),
    );
    assert!(first_summary(&configured).starts_with("Configured:\n- "));
    assert!(first_summary(&minimal()).starts_with("What the user asked:\n- "));
}

#[test]
fn the_sdk_example_folds_a_session_through_the_host() {
    let history = session("cc-opus-c");
    let config = config_40k();
    let out = first_compaction(&minimal());
    assert_eq!(out.report.status(), Status::Compressed);
    let summary = summary_of(out.checkpoint.as_ref().unwrap());
    let first_request = history
        .iter()
        .find(|m| m.role == Role::User)
        .unwrap()
        .joined_text();
    assert!(
        summary.starts_with("What the user asked:\n- ")
            && summary.contains(first_request.lines().next().unwrap().trim()),
        "{summary}"
    );
    assert!(estimate_text(&summary) <= config.core.summary_max_tokens);
}

#[test]
fn its_settings_are_its_own_type_and_a_wrong_key_is_named() {
    let middleware = minimal();
    let request = |settings: &str| SummaryRequest {
        previous_summary: String::new(),
        messages: vec![condense_model::Message::text(
            Role::User,
            "ship the fix\nthen the docs",
        )],
        max_tokens: 100,
        language: "en".into(),
        settings: settings.into(),
    };
    let summarize = |settings| middleware.runtime().summarize(&request(settings)).unwrap();
    assert_eq!(
        summarize("{}"),
        Ok("What the user asked:\n- ship the fix".into())
    );
    assert_eq!(
        summarize(r#"{"heading": "Asked:"}"#),
        Ok("Asked:\n- ship the fix".into())
    );
    let wrong = summarize(r#"{"headline": "Asked:"}"#).unwrap_err();
    assert!(
        wrong.contains("settings: unknown field `headline`"),
        "{wrong}"
    );
}

/// The repository's root.
fn repo() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

/// The SDK carries its own copy of the contract, so a crate that depends
/// on it needs nothing else of this repository; the copy is the contract,
/// and the SDK's version is the contract's version.
#[test]
fn the_sdk_vendors_the_contract_and_carries_its_version() {
    let read = |p: &str| std::fs::read_to_string(repo().join(p)).unwrap();
    assert!(
        read("guest/sdk/wit/condense.wit") == read("wit/condense.wit"),
        "guest/sdk/wit/condense.wit differs from wit/condense.wit: copy it over"
    );
    let manifest: toml::Table = read("guest/sdk/Cargo.toml").parse().unwrap();
    let version = manifest["package"]["version"].as_str().unwrap();
    assert_eq!(version, condense_host::CONTRACT_VERSION);
    assert!(
        read("wit/condense.wit").contains(&format!("package condense:middleware@{version};")),
        "the WIT package is not at {version}"
    );
}

/// A third party's summarizer: the SDK example copied out of the workspace
/// (nothing inherited from it: it has its own `[workspace]`), depending on
/// the SDK by path alone, built for wasm32-wasip2 by cargo there, loaded by
/// the host from that path, and writing the summary the in-tree build of the
/// same source writes.
#[test]
fn the_sdk_example_builds_outside_the_workspace_and_loads() {
    let dir = tempfile::tempdir().unwrap();
    let example = repo().join("guest/examples/summarizer-minimal");
    let manifest = std::fs::read_to_string(example.join("Cargo.toml")).unwrap();
    let sdk = repo().join("guest/sdk");
    let sdk = toml::Value::from(sdk.to_str().unwrap()).to_string();
    let moved = manifest.replace("path = \"../../sdk\"", &format!("path = {sdk}"));
    assert_ne!(moved, manifest, "the example names the SDK by ../../sdk");
    assert!(
        !manifest.contains(".workspace"),
        "the example inherits from the workspace"
    );
    std::fs::write(
        dir.path().join("Cargo.toml"),
        format!("{moved}\n[workspace]\n"),
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::copy(example.join("src/lib.rs"), dir.path().join("src/lib.rs")).unwrap();
    // The versions this repository builds with, so the build needs no
    // newer crate than the ones already fetched.
    std::fs::copy(repo().join("Cargo.lock"), dir.path().join("Cargo.lock")).unwrap();
    // Kept between runs under target/, not in the temporary directory: the
    // SDK's dependencies are built once.
    let target = repo().join("target/sdk-outside");
    let mut cargo = std::process::Command::new(std::env::var("CARGO").unwrap_or("cargo".into()));
    cargo
        .current_dir(dir.path())
        .args([
            "build",
            "--release",
            "--target",
            "wasm32-wasip2",
            "--target-dir",
        ])
        .arg(&target);
    for var in condense_guest_builder::HOST_BUILD_VARS {
        cargo.env_remove(var);
    }
    let built = cargo.output().unwrap();
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let component = target.join("wasm32-wasip2/release/summarizer_minimal.wasm");
    let outside = Middleware::new(
        Runtime::new(
            Limits::default(),
            ComponentSource::Embedded(condense_embedded::COMPRESSOR),
            ComponentSource::Path(component.clone()),
        )
        .unwrap_or_else(|e| panic!("{e:#}")),
    );
    assert_eq!(first_summary(&outside), first_summary(&minimal()));

    // Loaded from a config file, as a user runs it: its settings table
    // reaches it, and a wrong key stops the load, naming the key.
    let config = |settings: &str| {
        let file = dir.path().join("condense.toml");
        let path = toml::Value::from(component.to_str().unwrap());
        std::fs::write(
            &file,
            format!(
                "token_threshold = 40000\n[components]\nsummarizer = {path}\n\n\
                 [summarizers.\"summarizer_minimal.wasm\"]\n{settings}\n"
            ),
        )
        .unwrap();
        condense_config::AgentSettings::load(&file)
            .unwrap()
            .middleware(
                &condense_embedded::COMPONENTS,
                &condense_config::no_model_client,
            )
    };
    let configured = config("heading = \"Configured:\"").unwrap_or_else(|e| panic!("{e:#}"));
    assert!(first_summary(&configured).starts_with("Configured:\n- "));
    let wrong = config("headline = \"Configured:\"")
        .err()
        .expect("a key the summarizer does not have stops the load")
        .to_string();
    assert!(
        wrong.starts_with(
            "summarizers.\"summarizer_minimal.wasm\": settings: unknown field `headline`"
        ),
        "{wrong}"
    );
}

/// Every summarizer describes and checks its own settings (the
/// `summarizer-settings` interface, with the SDK's defaults), and the host
/// asks it when it loads its configuration.
#[test]
fn a_summarizer_checks_and_describes_its_own_settings() {
    let runtime = minimal_runtime();
    assert_eq!(
        runtime.validate_summarizer_settings(0, r#"{"heading": "Asked:"}"#),
        Ok(Ok(()))
    );
    let wrong = runtime
        .validate_summarizer_settings(0, r#"{"headline": "Asked:"}"#)
        .unwrap()
        .unwrap_err();
    assert!(wrong.contains("unknown field `headline`"), "{wrong}");
    let schema = runtime.summarizer_settings_schema(0).unwrap().unwrap();
    let schema: serde_json::Value = serde_json::from_str(&schema).unwrap();
    assert_eq!(schema["type"], "object");
}

/// A component built before the `summarizer-settings` interface existed
/// still loads and summarizes; since nothing can check settings for it, a
/// config that gives it some is refused at load.
#[test]
fn a_summarizer_without_the_settings_interface_still_loads_and_takes_no_settings() {
    let runtime = Runtime::new(
        Limits::default(),
        ComponentSource::Embedded(condense_embedded::COMPRESSOR),
        ComponentSource::Path(guests::TEST_SUMMARIZER_PRE_SETTINGS.into()),
    )
    .unwrap_or_else(|e| panic!("{e:#}"));
    assert_eq!(runtime.summarizer_settings_schema(0), Ok(None));
    assert_eq!(runtime.validate_summarizer_settings(0, "{}"), Ok(Ok(())));
    let refused = runtime
        .validate_summarizer_settings(0, r#"{"heading": "x"}"#)
        .unwrap()
        .unwrap_err();
    assert!(refused.contains("`summarizer-settings`"), "{refused}");
    let out = first_compaction(&Middleware::new(runtime));
    assert_eq!(out.report.status(), Status::Compressed);
}
