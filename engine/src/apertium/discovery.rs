//! Discovery of installed Apertium pairs: `*.mode` files, their languages,
//! and the null-flush pipeline each one runs.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{EngineError, Lang, Pair};

/// One stage of a pipeline: a program and its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Stage {
    pub program: String,
    pub args: Vec<String>,
}

/// An installed translation direction.
#[derive(Debug, Clone)]
pub(crate) struct Mode {
    pub pair: Pair,
    pub path: PathBuf,
    pub stages: Vec<Stage>,
}

/// Reads all usable modes of `dir`, sorted by name. Modes whose name is not
/// `xx(_variant)-yy(_variant)` (e.g. `eco-es-fr`) or whose pipeline cannot
/// be run stage by stage are skipped with a warning.
pub(crate) fn discover(dir: &Path) -> Result<Vec<Mode>, EngineError> {
    let entries = std::fs::read_dir(dir).map_err(|e| {
        EngineError::Failed(format!(
            "cannot read Apertium modes directory {}: {e}",
            dir.display()
        ))
    })?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "mode"))
        .collect();
    paths.sort();
    let mut modes = Vec::new();
    for path in paths {
        let Some(name) = path.file_stem().and_then(|s| s.to_str()).map(str::to_owned) else {
            continue;
        };
        let Some((source, target)) = parse_mode_name(&name) else {
            tracing::debug!(mode = name, "skipping mode that is not a language pair");
            continue;
        };
        let text = match pipeline_text(&path) {
            Ok(t) => t,
            Err(e) => {
                tracing::warn!(mode = name, error = e, "skipping unreadable mode");
                continue;
            }
        };
        match parse_pipeline(&text) {
            Ok(stages) if !stages.is_empty() => {
                if let Some(missing) = stages.iter().find(|s| find_program(&s.program).is_none()) {
                    tracing::warn!(
                        mode = name,
                        program = missing.program,
                        "skipping mode: program not found"
                    );
                    continue;
                }
                modes.push(Mode {
                    pair: Pair {
                        id: name,
                        source,
                        target,
                    },
                    path,
                    stages,
                });
            }
            Ok(_) => tracing::warn!(mode = name, "skipping empty mode"),
            Err(e) => tracing::warn!(
                mode = name,
                error = e,
                "skipping mode with an unsupported pipeline"
            ),
        }
    }
    Ok(modes)
}

/// `eng-spa` → (eng, spa); `es-pt_BR` → (spa, por+BR); `eco-es-fr` → None.
pub(crate) fn parse_mode_name(name: &str) -> Option<(Lang, Lang)> {
    let mut parts = name.split('-');
    let (s, t) = (parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    Some((Lang::from_apertium(s)?, Lang::from_apertium(t)?))
}

/// The pipeline of a mode with null-flush (`-z`) on every stage and
/// wordbound-blank handling, as `apertium-wblank-mode -z` writes it; falls
/// back to adding `-z` ourselves when that tool is missing.
fn pipeline_text(path: &Path) -> Result<String, String> {
    match Command::new("apertium-wblank-mode")
        .arg("-z")
        .arg(path)
        .output()
    {
        Ok(out) if out.status.success() && !out.stdout.is_empty() => {
            return String::from_utf8(out.stdout).map_err(|e| e.to_string());
        }
        Ok(out) => tracing::warn!(
            mode = %path.display(),
            stderr = %String::from_utf8_lossy(&out.stderr),
            "apertium-wblank-mode failed; adding -z ourselves (inline tags will not follow reordered words)"
        ),
        Err(e) => {
            tracing::warn!(error = %e, "apertium-wblank-mode not found; adding -z ourselves (inline tags will not follow reordered words)")
        }
    }
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let stages = parse_pipeline(&text)?;
    let quoted: Vec<String> = stages
        .into_iter()
        .map(|mut s| {
            if !s.args.iter().any(|a| a == "-z") {
                s.args.insert(0, "-z".to_owned());
            }
            std::iter::once(s.program)
                .chain(s.args)
                .map(|w| shell_quote(&w))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    Ok(quoted.join(" | "))
}

fn shell_quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+".contains(c))
    {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// Splits a mode's shell pipeline into stages. `$1` (the generator flag)
/// becomes `-n` (no unknown-word marks, as `apertium -u`); `$2` (the tagger
/// flag) is dropped. Anything beyond words, quotes and `|` (redirections,
/// `;`, `&&`, substitutions, other variables) is refused.
pub(crate) fn parse_pipeline(text: &str) -> Result<Vec<Stage>, String> {
    let mut stages: Vec<Vec<String>> = vec![Vec::new()];
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = text.chars().peekable();
    let end_word = |word: &mut String, in_word: &mut bool, stages: &mut Vec<Vec<String>>| {
        if *in_word {
            if let Some(stage) = stages.last_mut() {
                stage.push(std::mem::take(word));
            }
            *in_word = false;
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err("unterminated single quote".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => word.push(c),
                            Some(c) => {
                                word.push('\\');
                                word.push(c);
                            }
                            None => return Err("unterminated double quote".into()),
                        },
                        Some('$' | '`') => return Err("substitution inside double quotes".into()),
                        Some(c) => word.push(c),
                        None => return Err("unterminated double quote".into()),
                    }
                }
            }
            '\\' => {
                if let Some(n) = chars.next()
                    && n != '\n'
                {
                    in_word = true;
                    word.push(n);
                }
            }
            '$' => {
                let var = chars.next();
                if in_word || !chars.peek().is_none_or(|c| c.is_whitespace() || *c == '|') {
                    return Err("variable inside a word".into());
                }
                match var {
                    Some('1') => {
                        in_word = true;
                        word.push_str("-n");
                    }
                    Some('2') => {}
                    _ => return Err("unsupported variable".into()),
                }
            }
            '|' => {
                if chars.peek() == Some(&'|') {
                    return Err("'||' is not supported".into());
                }
                end_word(&mut word, &mut in_word, &mut stages);
                stages.push(Vec::new());
            }
            c if c.is_whitespace() => end_word(&mut word, &mut in_word, &mut stages),
            ';' | '&' | '<' | '>' | '`' | '(' | ')' | '#' => {
                return Err(format!("unsupported shell syntax '{c}'"));
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    end_word(&mut word, &mut in_word, &mut stages);
    if stages.len() > 1 && stages.iter().any(Vec::is_empty) {
        return Err("empty pipeline stage".into());
    }
    Ok(stages
        .into_iter()
        .filter_map(|mut words| {
            if words.is_empty() {
                return None;
            }
            let program = words.remove(0);
            Some(Stage {
                program,
                args: words,
            })
        })
        .collect())
}

/// Path of `program` (absolute, or found on `PATH`).
fn find_program(program: &str) -> Option<PathBuf> {
    let p = Path::new(program);
    if p.components().count() > 1 {
        return p.is_file().then(|| p.to_path_buf());
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(program))
        .find(|c| c.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mode_names() {
        assert_eq!(
            parse_mode_name("eng-spa"),
            Some((Lang::new("eng"), Lang::new("spa")))
        );
        assert_eq!(
            parse_mode_name("es-pt_BR"),
            Some((Lang::new("spa"), Lang::with_variant("por", "BR")))
        );
        assert_eq!(
            parse_mode_name("spa-eng_US"),
            Some((Lang::new("spa"), Lang::with_variant("eng", "US")))
        );
        assert_eq!(parse_mode_name("eco-es-fr"), None);
        assert_eq!(parse_mode_name("eng"), None);
        assert_eq!(parse_mode_name("eng-spa-tagger"), None);
    }

    #[test]
    fn pipelines_parse_into_stages() {
        let text = "lt-proc -z '/a b/x.bin' | apertium-tagger -z -g $2 '/p.prob' | lt-proc -z $1 \"/gen.bin\" | lt-proc -z -p /pgen.bin\n";
        let stages = parse_pipeline(text).unwrap();
        assert_eq!(stages.len(), 4);
        assert_eq!(
            stages[0],
            Stage {
                program: "lt-proc".into(),
                args: vec!["-z".into(), "/a b/x.bin".into()]
            }
        );
        assert_eq!(stages[1].args, ["-z", "-g", "/p.prob"]);
        assert_eq!(stages[2].args, ["-z", "-n", "/gen.bin"]);
        assert!(parse_pipeline("a > b").is_err());
        assert!(parse_pipeline("a | | b").is_err());
        assert!(parse_pipeline("a $HOME").is_err());
        assert!(parse_pipeline("a 'b").is_err());
        assert!(parse_pipeline("a; b").is_err());
    }

    #[test]
    fn quoting_round_trips() {
        let words = ["lt-proc", "-z", "/a b/it's.bin", ""];
        let text = words
            .iter()
            .map(|w| shell_quote(w))
            .collect::<Vec<_>>()
            .join(" ");
        let stages = parse_pipeline(&text).unwrap();
        assert_eq!(stages[0].program, "lt-proc");
        assert_eq!(stages[0].args, ["-z", "/a b/it's.bin", ""]);
    }
}
