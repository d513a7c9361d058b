//! A planted-error corpus (every planted error must be found with the right
//! type and spans) and a clean corpus of real Apertium EN→ES output (no Critical
//! or Major finding).

use crate::text::substring;
use crate::{Issue, Options, SegmentResult, Severity, SubType, evaluate, summarize};

fn en_es() -> Options {
    Options::new("EN", "ES")
}

fn find(issues: &[Issue], sub: SubType) -> &Issue {
    issues
        .iter()
        .find(|i| i.sub_type == sub)
        .unwrap_or_else(|| panic!("no {sub:?} in {issues:#?}"))
}

fn spanned(text: &str, spans: &[crate::Span]) -> Vec<String> {
    spans
        .iter()
        .map(|s| substring(text, s.start, s.end))
        .collect()
}

/// Real `apertium -u eng-spa` output for these sources (2026-11-21).
const CLEAN: [(&str, &str); 12] = [
    (
        "Our third-quarter revenue came in 5% above forecast.",
        "Nuestro tercer-ingresos de barrio entraron 5% encima previsión.",
    ),
    (
        "Please share these results with your teams by Friday.",
        "Complacer compartir estos resultados con vuestros equipos por viernes.",
    ),
    (
        "The meeting will start at 10:30 in the main room.",
        "La reunión empezará en 10:30 en general sala.",
    ),
    (
        "The company hired 250 new employees last year.",
        "La empresa contrató 250 empleados nuevos último año.",
    ),
    (
        "We do not accept payments in cash.",
        "No aceptamos pagos en efectivo.",
    ),
    (
        "The price of the ticket is 45 dollars.",
        "El precio de la entrada es 45 dólares.",
    ),
    (
        "Click the button to save your changes.",
        "Clic el botón para salvar vuestros cambios.",
    ),
    (
        "The report was published on 12 March 2024.",
        "El informe estuvo publicado el 12 de marzo de 2024.",
    ),
    (
        "Sales fell by 3% in the second quarter.",
        "Las ventas cayeron por 3% en el segundo barrio.",
    ),
    (
        "The house has three bedrooms and a large garden.",
        "La casa tiene tres dormitorios y un jardín grande.",
    ),
    (
        "Our customers can contact the support team at any time.",
        "Nuestros clientes pueden contactar el equipo de apoyo en cualquier tiempo.",
    ),
    (
        "The new version is faster and uses less memory.",
        "La versión nueva es más rápida y usos menos memoria.",
    ),
];

#[test]
fn clean_apertium_output_has_no_critical_or_major_findings() {
    for (s, t) in CLEAN {
        let issues = evaluate(s, t, &en_es());
        let serious: Vec<_> = issues
            .iter()
            .filter(|i| i.severity != Severity::Minor)
            .collect();
        assert!(serious.is_empty(), "{s} → {t}: {serious:#?}");
    }
}

#[test]
fn direction_swap_is_critical_with_spans_on_the_words() {
    let s = "Our Q3 revenue came in 5% above forecast.";
    let t = "Nuestros ingresos del T3 fueron un 5% por debajo de la previsión.";
    let issues = evaluate(s, t, &en_es());
    let i = find(&issues, SubType::Mistranslation);
    assert_eq!(i.severity, Severity::Critical);
    assert_eq!(spanned(s, &i.source_spans), ["5% above"]);
    assert_eq!(spanned(t, &i.target_spans), ["5% por debajo"]);
}

#[test]
fn swapped_number_is_critical() {
    let s = "The company hired 250 new employees in 2023.";
    let t = "La empresa contrató 520 empleados nuevos en 2023.";
    let issues = evaluate(s, t, &en_es());
    let i = find(&issues, SubType::Mistranslation);
    assert_eq!(i.severity, Severity::Critical);
    assert_eq!(spanned(s, &i.source_spans), ["250"]);
    assert_eq!(spanned(t, &i.target_spans), ["520"]);
    // Separators of the target language are not a difference.
    let ok = evaluate(
        "It costs $1,250.50 in total.",
        "Cuesta 1.250,50 $ en total.",
        &en_es(),
    );
    assert!(ok.iter().all(|i| i.severity == Severity::Minor), "{ok:#?}");
}

#[test]
fn changed_month_is_critical() {
    let s = "The report was published on 12 March 2024.";
    let t = "El informe fue publicado el 12 de mayo de 2024.";
    let i = evaluate(s, t, &en_es());
    let i = find(&i, SubType::Mistranslation);
    assert_eq!(spanned(s, &i.source_spans), ["March"]);
    assert_eq!(spanned(t, &i.target_spans), ["mayo"]);
}

#[test]
fn dropped_sentence_is_a_major_omission() {
    let s = "The house has three bedrooms. It also has a large garden with old trees. The kitchen is new.";
    let t = "La casa tiene tres dormitorios. La cocina es nueva.";
    let issues = evaluate(s, t, &en_es());
    let i = find(&issues, SubType::Omission);
    assert_eq!(i.severity, Severity::Major);
    assert_eq!(
        spanned(s, &i.source_spans),
        ["It also has a large garden with old trees."]
    );
    assert!(i.target_spans.is_empty());
}

#[test]
fn added_sentence_is_a_major_addition() {
    let s = "The kitchen is new.";
    let t = "La cocina es nueva. Además, la casa tiene un garaje muy grande.";
    let i = evaluate(s, t, &en_es());
    let i = find(&i, SubType::Addition);
    assert_eq!(
        spanned(t, &i.target_spans),
        ["Además, la casa tiene un garaje muy grande."]
    );
}

#[test]
fn lost_tag_and_placeholder_are_found() {
    let s = "Click <b>Save</b> to keep {count} changes.";
    let t = "Haz clic en Guardar para conservar los cambios.";
    let issues = evaluate(s, t, &en_es());
    let lost: Vec<String> = issues
        .iter()
        .filter(|i| i.sub_type == SubType::Omission)
        .flat_map(|i| spanned(s, &i.source_spans))
        .collect();
    assert!(lost.contains(&"<b>".to_owned()), "{issues:#?}");
    assert!(lost.contains(&"</b>".to_owned()));
    assert!(lost.contains(&"{count}".to_owned()));
    // Tags moving with the word order are fine; broken nesting is not.
    let moved = evaluate(
        "<b>red</b> <i>car</i>",
        "<i>coche</i> <b>rojo</b>",
        &en_es(),
    );
    assert!(moved.is_empty(), "{moved:#?}");
    let broken = evaluate(
        "<b>red <i>car</i></b>",
        "<b>coche <i>rojo</b></i>",
        &en_es(),
    );
    assert_eq!(
        find(&broken, SubType::Inconsistency).severity,
        Severity::Major
    );
}

#[test]
fn glossary_term_replaced_is_found() {
    let mut o = en_es();
    o.glossary
        .push(("invoice".to_owned(), "factura".to_owned()));
    let s = "Please send the invoice today.";
    let t = "Por favor, envíe el recibo hoy.";
    let issues = evaluate(s, t, &o);
    let i = find(&issues, SubType::Mistranslation);
    assert_eq!(i.severity, Severity::Major);
    assert_eq!(spanned(s, &i.source_spans), ["invoice"]);
    // Inflected forms satisfy the glossary.
    let ok = evaluate("Send the invoices.", "Envíe las facturas.", &o);
    assert!(ok.is_empty(), "{ok:#?}");
}

#[test]
fn segment_left_in_english_is_untranslated() {
    let s = "Please share these results with your teams.";
    let issues = evaluate(s, s, &en_es());
    let i = find(&issues, SubType::UntranslatedText);
    assert_eq!(i.severity, Severity::Major);
    assert_eq!(i.target_spans, vec![crate::Span::new(0, s.chars().count())]);
    // Part of it left in English.
    let t = "Comparta estos resultados with your teams.";
    let issues = evaluate(s, t, &en_es());
    let i = find(&issues, SubType::UntranslatedText);
    assert_eq!(spanned(t, &i.target_spans), ["with your teams"]);
    assert_eq!(spanned(s, &i.source_spans), ["with your teams"]);
}

#[test]
fn lost_negation_is_major() {
    let s = "We do not accept payments in cash.";
    let t = "Aceptamos pagos en efectivo.";
    let i = evaluate(s, t, &en_es());
    let i = find(&i, SubType::Mistranslation);
    assert_eq!(i.severity, Severity::Major);
    assert_eq!(spanned(s, &i.source_spans), ["not"]);
}

#[test]
fn punctuation_and_casing_conventions() {
    let issues = evaluate("Are you coming?", "vienes  ?", &en_es());
    let subs: Vec<SubType> = issues.iter().map(|i| i.sub_type).collect();
    assert!(subs.contains(&SubType::Spelling), "{issues:#?}");
    assert!(issues.iter().all(|i| i.severity == Severity::Minor));
    let n = issues
        .iter()
        .filter(|i| i.sub_type == SubType::Punctuation)
        .count();
    assert!(
        n >= 3,
        "double space, space before '?', missing '¿': {issues:#?}"
    );
    let fr = evaluate("Why?", "Pourquoi?", &Options::new("en", "fr"));
    assert_eq!(find(&fr, SubType::Punctuation).target_spans[0].end, 9);
    let enc = evaluate("The café.", "El cafÃ©.", &en_es());
    assert_eq!(
        find(&enc, SubType::CharacterEncoding).severity,
        Severity::Major
    );
}

#[test]
fn empty_target_is_a_critical_omission() {
    let i = evaluate("Hello world.", "  ", &en_es());
    assert_eq!(i[0].severity, Severity::Critical);
    assert_eq!(i[0].sub_type, SubType::Omission);
}

#[test]
fn summary_counts_and_scores() {
    let a = evaluate(
        "Revenue came in 5% above forecast.",
        "Los ingresos fueron un 5% por debajo de la previsión.",
        &en_es(),
    );
    let segs = vec![
        SegmentResult {
            segment_index: 0,
            errors: a,
        },
        SegmentResult {
            segment_index: 1,
            errors: Vec::new(),
        },
    ];
    let sum = summarize(&["Revenue came in 5% above forecast.", "Fine."], &segs);
    assert_eq!(
        sum.granular_counts["Accuracy"]["Mistranslation"]["Critical"],
        1
    );
    assert!(sum.overall_score < 100 && sum.overall_score > 0);
    let json = serde_json::to_value(&segs[0].errors[0]).unwrap();
    assert_eq!(json["type"], "Accuracy");
    assert_eq!(json["severity"], "Critical");
    assert!(json["source_spans"][0]["start"].is_number());
    let perfect = summarize(&["Fine."], &segs[1..]);
    assert_eq!(perfect.overall_score, 100);
}

#[test]
fn back_translation_far_from_source_is_a_minor_hint() {
    assert!(
        crate::back_translation_issue(
            "The house has three bedrooms and a garden.",
            "The house has three bedrooms and a garden."
        )
        .is_none()
    );
    let i = crate::back_translation_issue(
        "The house has three bedrooms and a garden.",
        "Quarterly revenue grew quickly.",
    )
    .unwrap();
    assert_eq!(i.severity, Severity::Minor);
}

#[test]
fn a_pathological_segment_is_capped() {
    let s = "1 ".repeat(200);
    let t = "2 ".repeat(200);
    let issues = evaluate(&s, &t, &en_es());
    assert_eq!(issues.len(), crate::MAX_ISSUES_PER_SEGMENT);
    assert!(issues.iter().all(|i| i.severity == Severity::Critical));
}
