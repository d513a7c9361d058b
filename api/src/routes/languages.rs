//! Language validation shared by the routes that take `source_lang`/`target_lang`.

use tolk_engine::{EngineError, lang};

use crate::{ApiError, AppState};

/// Checks that the request can be served: known codes, a route between them (when
/// the source is given), and a formality the target supports. Source == target is
/// accepted here: the document then ends in error with a message saying so.
pub fn check(
    state: &AppState,
    source: Option<&str>,
    target: &str,
    formality: Option<&str>,
) -> Result<(), ApiError> {
    let target_lang = lang::parse_target(target).map_err(engine_error)?;
    match source {
        Some(source) => match state.translator.route(source, target) {
            Ok(_) | Err(EngineError::SameLanguage { .. }) => {}
            Err(e) => return Err(engine_error(e)),
        },
        None => {
            let code = target_lang
                .deepl_code()
                .unwrap_or_else(|| target.to_ascii_uppercase());
            let reachable = state
                .translator
                .languages()
                .target
                .iter()
                .any(|l| l.code.eq_ignore_ascii_case(&code));
            if !reachable {
                return Err(ApiError::BadRequest(format!(
                    "Value for 'target_lang' not supported: no installed engine translates into {code}."
                )));
            }
        }
    }
    check_formality(state, target, formality)
}

fn check_formality(
    state: &AppState,
    target: &str,
    formality: Option<&str>,
) -> Result<(), ApiError> {
    match formality.map(str::trim).filter(|f| !f.is_empty()) {
        None | Some("default") | Some("prefer_more") | Some("prefer_less") => Ok(()),
        Some(f @ ("more" | "less")) => {
            let supported = state
                .translator
                .languages()
                .target
                .iter()
                .any(|l| l.code.eq_ignore_ascii_case(target) && l.supports_formality);
            if supported {
                Ok(())
            } else {
                Err(ApiError::BadRequest(format!(
                    "'formality' = '{f}' is not supported for target_lang {}.",
                    target.to_ascii_uppercase()
                )))
            }
        }
        Some(other) => Err(ApiError::BadRequest(format!(
            "Value for 'formality' not supported: '{other}' (allowed: default, more, less, prefer_more, prefer_less)."
        ))),
    }
}

/// Maps an engine error to the API's 400 with the engine's message (which names the
/// parameter or the pair), or to 500 for engine failures.
pub fn engine_error(e: EngineError) -> ApiError {
    match e {
        EngineError::Unavailable(m) | EngineError::Failed(m) => ApiError::Internal(m),
        other => ApiError::BadRequest(other.to_string()),
    }
}
