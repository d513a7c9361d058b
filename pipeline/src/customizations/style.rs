//! The style rule list of a translation.

use tolk_storage::style_rules;
use tolk_style::{StyleRules, language};
use uuid::Uuid;

use crate::{Pipeline, PipelineError};

impl Pipeline<'_> {
    /// Style rule list `id` of `organization_id`, which must apply to
    /// `target_lang`.
    pub async fn style_rules(
        &self,
        organization_id: Uuid,
        id: Uuid,
        target_lang: &str,
    ) -> Result<StyleRules, PipelineError> {
        let l = style_rules::get(self.db, organization_id, id)
            .await?
            .ok_or(PipelineError::StyleNotFound(id))?;
        if !language::applies_to(&l.language, target_lang) {
            return Err(PipelineError::StyleLanguage {
                id,
                language: l.language,
                target: target_lang.to_ascii_uppercase(),
            });
        }
        Ok(StyleRules::from_json(
            &l.language,
            &l.configured_rules,
            &l.custom_instructions,
        ))
    }
}
