use super::*;
use clap::CommandFactory;

#[test]
fn input_format_help_names_every_format() {
    let help = Cli::command().render_long_help().to_string();
    for f in Format::ALL {
        assert!(help.contains(f.name()), "{f} missing from --help");
    }
}

/// Each command's help lists only the options it uses (verify once
/// listed --theme and --reviewer).
#[test]
fn each_command_lists_only_its_options() {
    let mut cli = Cli::command();
    // Global options reach the subcommands when the command is built.
    cli.build();
    let verify = cli
        .find_subcommand_mut("verify")
        .unwrap()
        .render_long_help()
        .to_string();
    for not in [
        "--theme",
        "--reviewer",
        "--contracts",
        "--key-file",
        "--read-only",
    ] {
        assert!(
            !verify.contains(not),
            "verify --help lists {not}:\n{verify}"
        );
    }
    for yes in [
        "--signer-key",
        "--input-format",
        "--case",
        "--config",
        "--color",
    ] {
        assert!(verify.contains(yes), "verify --help lacks {yes}");
    }
    let groups = cli
        .find_subcommand_mut("groups")
        .unwrap()
        .render_long_help()
        .to_string();
    assert!(!groups.contains("--theme") && !groups.contains("--reviewer"));
    assert!(groups.contains("--contracts"));
}
