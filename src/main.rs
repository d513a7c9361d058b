//! `tolk`: one binary with subcommands api, worker, scheduler, auth, up,
//! migrate and admin.

mod admin;
mod cli;
mod roles;
mod services;

use anyhow::Context;
use clap::Parser;

use cli::{Cli, Command};

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    init_tracing(&cli.common.log_format);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(run(cli))
}

fn init_tracing(format: &str) {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        EnvFilter::new("info,sqlx=warn,apalis=warn,apalis_core=warn,apalis_postgres=warn")
    });
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr);
    if format == "json" {
        builder.json().init();
    } else {
        builder.init();
    }
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    let common = &cli.common;
    match cli.command {
        Command::Migrate => admin::migrate(common).await,
        Command::Admin { command } => admin::run(common, command).await,
        Command::Auth {
            listen,
            no_migrate,
            auth,
        } => roles::auth(common, listen, no_migrate, auth).await,
        Command::Api(api) => roles::api(common, api).await,
        Command::Worker(worker) => roles::worker(common, worker).await,
        Command::Scheduler(args) => roles::scheduler(common, args).await,
        Command::Up {
            api,
            auth,
            worker,
            scheduler,
        } => roles::up(common, api, auth, worker, scheduler).await,
    }
}
