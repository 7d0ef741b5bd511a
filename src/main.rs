//! The binary edge: parse arguments, merge them with the settings file,
//! pick a front end, map errors to exit codes (0 success, 1 a write refused
//! or failed, 2 unreadable input; `CliError::exit_code`).

#![forbid(unsafe_code)]

use clap::{CommandFactory, Parser};
use retrace::cli::config::{Flags, Settings, resolve};
use retrace::cli::{self, Cli, CliError, Command, ContractsCommand, ReviewCommand};
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
            // Each line escaped: a file name cannot forge a line of its own.
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
    let settings = Settings::load(args.global.config.as_deref())?;
    // Options written before the command name apply to it.
    let outer = Flags {
        journals: args.journals,
        read: args.read,
        analysis: args.analysis,
        case: args.case,
        reviewer: args.reviewer,
        tui: args.tui,
        color: args.global.color,
        window: args.window,
    };
    // Commands that take no --since/--until look at every execution.
    let flags =
        |journals, read: cli::ReadOpts, analysis: cli::AnalysisOpts, case: cli::CaseOpts| Flags {
            journals,
            read: read.or(&outer.read),
            analysis: analysis.or(&outer.analysis),
            case: case.or(&outer.case),
            reviewer: outer.reviewer.clone(),
            tui: outer.tui.clone(),
            color: outer.color,
            window: cli::WindowOpts::default(),
        };
    let within = |f: Flags, window: cli::WindowOpts| Flags {
        window: window.or(&outer.window),
        ..f
    };
    // Written before the name of a command that does not take them, they
    // would be ignored: say so instead.
    let takes_window = matches!(
        &args.command,
        None | Some(
            Command::Groups { .. }
                | Command::Investigate { .. }
                | Command::Export { .. }
                | Command::Review {
                    command: ReviewCommand::List { .. }
                }
        )
    );
    if !takes_window && (outer.window.since.is_some() || outer.window.until.is_some()) {
        return Err(CliError::Input(
            "--since/--until apply to groups, investigate, review list, export and the TUI; this command reads every execution (verify checks whole chains)".into(),
        ));
    }
    let Some(command) = args.command else {
        let r = resolve(outer.clone(), settings);
        retrace::tui::run(&r.setup, &r.tui_options())?;
        return Ok(0);
    };
    match command {
        Command::Groups {
            journals,
            all,
            json,
            read,
            analysis,
            case,
            window,
        } => {
            let r = resolve(
                within(flags(journals, read, analysis, case), window),
                settings,
            );
            let mut out = cli::stdout(r.color);
            let inv = cli::open(&r.setup)?;
            cli::groups(&inv, all, json, &mut out)?;
            out.flush()?;
            // The process ends here: freeing a million events one by one
            // would take longer than printing them.
            std::mem::forget(inv);
            Ok(0)
        }
        Command::Investigate {
            journals,
            group,
            json,
            read,
            analysis,
            case,
            window,
        } => {
            let r = resolve(
                within(flags(journals, read, analysis, case), window),
                settings,
            );
            let mut out = cli::stdout(r.color);
            let inv = cli::open(&r.setup)?;
            cli::investigate(&inv, &group, json, &mut out)?;
            out.flush()?;
            std::mem::forget(inv);
            Ok(0)
        }
        Command::Verify {
            journals,
            json,
            read,
            case,
            anchor,
        } => {
            let case = cli::CaseOpts {
                case,
                read_only: false,
            };
            let r = resolve(
                flags(journals, read, cli::AnalysisOpts::default(), case),
                settings,
            );
            let mut out = cli::stdout(r.color);
            let code = cli::verify(&r.setup, anchor.as_deref(), json, &mut out)?;
            out.flush()?;
            Ok(code)
        }
        Command::Watch {
            journals,
            json,
            exit_on,
            settle,
            interval,
            read,
            analysis,
            case,
        } => {
            let r = resolve(flags(journals, read, analysis, case), settings);
            let mut out = cli::stdout(r.color);
            let code = cli::watch(
                &r.setup,
                cli::WatchArgs {
                    json,
                    exit_on,
                    settle,
                    interval,
                },
                &mut out,
            )?;
            out.flush()?;
            Ok(code)
        }
        Command::Review { command } => {
            match command {
                ReviewCommand::List {
                    journals,
                    json,
                    read,
                    analysis,
                    case,
                    window,
                } => {
                    let r = resolve(
                        within(flags(journals, read, analysis, case), window),
                        settings,
                    );
                    let mut out = cli::stdout(r.color);
                    cli::review_list(&r.setup, json, &mut out)?;
                    out.flush()?;
                }
                ReviewCommand::Decide {
                    execution_id,
                    journals,
                    decision,
                    note,
                    read,
                    analysis,
                    case,
                    reviewer,
                } => {
                    let mut f = flags(journals, read, analysis, case);
                    f.reviewer = reviewer.or(&outer.reviewer);
                    let r = resolve(f, settings);
                    let mut out = cli::stdout(r.color);
                    cli::review_decide(&r.setup, &execution_id, decision, &note, &mut out)?;
                    out.flush()?;
                }
                ReviewCommand::Export {
                    journals,
                    output,
                    case,
                } => {
                    let f = flags(
                        journals,
                        cli::ReadOpts::default(),
                        cli::AnalysisOpts::default(),
                        case,
                    );
                    let r = resolve(f, settings);
                    let mut out = cli::stdout(r.color);
                    cli::review_export(&r.setup, output.as_deref(), &mut out)?;
                    out.flush()?;
                }
            }
            Ok(0)
        }
        Command::Export {
            journals,
            group,
            all: _,
            format,
            output,
            anonymize,
            read,
            analysis,
            case,
            window,
        } => {
            let r = resolve(
                within(flags(journals, read, analysis, case), window),
                settings,
            );
            let mut out = cli::stdout(r.color);
            cli::export(
                &r.setup,
                group.as_deref(),
                format,
                output.as_deref(),
                anonymize,
                &mut out,
            )?;
            out.flush()?;
            Ok(0)
        }
        Command::Contracts { command } => match command {
            ContractsCommand::Draft {
                journals,
                output,
                json,
                read,
                analysis,
            } => {
                let r = resolve(
                    flags(journals, read, analysis, cli::CaseOpts::default()),
                    settings,
                );
                let mut out = cli::stdout(r.color);
                cli::contracts_draft(&r.setup, output.as_deref(), json, &mut out)?;
                out.flush()?;
                Ok(0)
            }
            ContractsCommand::Lint {
                journals,
                json,
                read,
                analysis,
            } => {
                let r = resolve(
                    flags(journals, read, analysis, cli::CaseOpts::default()),
                    settings,
                );
                let mut out = cli::stdout(r.color);
                let code = cli::contracts_lint(&r.setup, json, &mut out)?;
                out.flush()?;
                Ok(code)
            }
        },
        Command::Completions { shell } => {
            // Generated whole, then written: clap_complete panics when a
            // write fails (`retrace completions bash | head`), this does not.
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "retrace", &mut script);
            let mut out = io::stdout().lock();
            out.write_all(&script)?;
            out.flush()?;
            Ok(0)
        }
        Command::Man => {
            let mut out = io::stdout().lock();
            clap_mangen::Man::new(Cli::command()).render(&mut out)?;
            out.flush()?;
            Ok(0)
        }
        Command::Config {
            read,
            analysis,
            case,
            reviewer,
            tui,
        } => {
            let mut f = flags(Vec::new(), read, analysis, case);
            f.reviewer = reviewer.or(&outer.reviewer);
            f.tui = cli::TuiOpts {
                theme: tui.theme.or(f.tui.theme),
                no_mouse: tui.no_mouse || f.tui.no_mouse,
            };
            let file = settings.as_ref().map(|(p, _)| p.clone());
            let r = resolve(f, settings);
            let mut out = cli::stdout(r.color);
            cli::config(&r, file.as_deref(), &mut out)?;
            out.flush()?;
            Ok(0)
        }
    }
}
