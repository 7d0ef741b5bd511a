//! The binary edge: parse arguments, pick a front end, map errors to exit
//! codes (0 success, 1 output failure, 2 unreadable input).

#![forbid(unsafe_code)]

use clap::Parser;
use retrace::cli::{self, Cli, CliError, Command, ReviewCommand};
use std::io::{self, Write};
use std::process::ExitCode;

/// mimalloc instead of the system allocator: loading a journal makes
/// millions of small, short-lived allocations (one JSON value per field),
/// and glibc's allocator spent about a third of the load time on them.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let args = Cli::parse();
    match run(args) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            if let CliError::Output(io) = &e
                && io.kind() == io::ErrorKind::BrokenPipe
            {
                return ExitCode::SUCCESS;
            }
            // One line, controls and newlines escaped: a file name cannot
            // forge a line of its own.
            let _ = writeln!(
                io::stderr(),
                "retrace: {}",
                retrace::sanitize::escape(&e.to_string())
            );
            ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(1))
        }
    }
}

fn run(args: Cli) -> Result<u8, CliError> {
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let common = &args.common;
    match args.command {
        None => {
            retrace::tui::run(&cli::setup(&args.journals, common), common.theme.as_deref())?;
            Ok(0)
        }
        Some(Command::Groups {
            journals,
            all,
            json,
        }) => {
            let inv = cli::open(&cli::setup(&journals, common))?;
            cli::groups(&inv, all, json, &mut out)?;
            out.flush()?;
            // The process ends here: freeing a million events one by one
            // would take longer than printing them.
            std::mem::forget(inv);
            Ok(0)
        }
        Some(Command::Investigate {
            journals,
            group,
            json,
        }) => {
            let inv = cli::open(&cli::setup(&journals, common))?;
            cli::investigate(&inv, &group, json, &mut out)?;
            out.flush()?;
            std::mem::forget(inv);
            Ok(0)
        }
        Some(Command::Review { command }) => {
            match command {
                ReviewCommand::List { journals, json } => {
                    cli::review_list(&cli::setup(&journals, common), json, &mut out)?;
                }
                ReviewCommand::Decide {
                    execution_id,
                    journals,
                    decision,
                    note,
                } => {
                    cli::review_decide(
                        &cli::setup(&journals, common),
                        &execution_id,
                        decision,
                        &note,
                        &mut out,
                    )?;
                }
                ReviewCommand::Export { journals, output } => {
                    cli::review_export(
                        &cli::setup(&journals, common),
                        output.as_deref(),
                        &mut out,
                    )?;
                }
            }
            out.flush()?;
            Ok(0)
        }
        Some(Command::Export {
            journals,
            group,
            all: _,
            format,
            output,
            anonymize,
        }) => {
            cli::export(
                &cli::setup(&journals, common),
                group.as_deref(),
                format,
                output.as_deref(),
                anonymize,
                &mut out,
            )?;
            out.flush()?;
            Ok(0)
        }
        Some(Command::Verify { journals, json }) => {
            let code = cli::verify(&journals, common, json, &mut out)?;
            out.flush()?;
            Ok(code)
        }
    }
}
