//! Cut points of YAML: between the entries of the first mapping from the top
//! with more than one key.

use std::ops::Range;

use super::{Cut, Envelope, cut_legacy_at};

/// YAML, between the entries of the first mapping from the top with more
/// than one key (a Rails file's `en:` mapping): at the line of each key, each
/// piece after the first under the lines of the keys above it. A file with
/// anchors, aliases, tags, several documents or a key that does not start its
/// line stays whole.
pub(crate) fn yaml(input: &[u8], size: usize) -> Option<Cut> {
    cut_legacy_at(input, size, |text| {
        let (points, head) = yaml_points(text)?;
        let head = text[head].to_owned();
        let lines = head.matches('\n').count();
        Some((points, Envelope::Prefix { head, lines }))
    })
}

/// A mapping being read by [`yaml_points`].
struct YamlFrame {
    mapping: bool,
    key_next: bool,
    /// On the path of first keys from the top: the byte offsets of its keys.
    keys: Option<Vec<usize>>,
}

/// The cut points of a YAML file (the line starts of the keys after the
/// first of the mapping [`yaml`] cuts) and the head before its first key.
fn yaml_points(text: &str) -> Option<(Vec<usize>, Range<usize>)> {
    use saphyr_parser::{Event, Parser};
    let mut offsets = crate::yaml::CharOffsets::new(text);
    let mut stack: Vec<YamlFrame> = Vec::new();
    let mut documents = 0;
    // The shallowest mapping on the path with more than one key: (depth, keys).
    let mut chosen: Option<(usize, Vec<usize>)> = None;
    for event in Parser::new_from_str(text) {
        let (event, span) = event.ok()?;
        // A node in a mapping is its key or its value, by turns.
        let parent_key = match stack.last_mut() {
            Some(frame) if frame.mapping => {
                let key = frame.key_next;
                frame.key_next = !key;
                key
            }
            _ => false,
        };
        match event {
            Event::DocumentStart(_) => {
                documents += 1;
                if documents > 1 {
                    return None;
                }
            }
            Event::Alias(_) => return None,
            Event::Scalar(_, _, anchor, tag) => {
                if anchor != 0 || tag.is_some() {
                    return None;
                }
                if parent_key && let Some(keys) = stack.last_mut().and_then(|f| f.keys.as_mut()) {
                    keys.push(offsets.byte(span.start.index()));
                }
            }
            Event::MappingStart(anchor, ref tag) | Event::SequenceStart(anchor, ref tag) => {
                if anchor != 0 || tag.is_some() {
                    return None;
                }
                let mapping = matches!(event, Event::MappingStart(..));
                // On the path: the top node, or the value of the first key of
                // a mapping on the path.
                let on_path = match stack.last() {
                    None => true,
                    Some(parent) => {
                        !parent_key && parent.keys.as_ref().is_some_and(|k| k.len() == 1)
                    }
                };
                stack.push(YamlFrame {
                    mapping,
                    key_next: true,
                    keys: (on_path && mapping).then(Vec::new),
                });
            }
            Event::MappingEnd | Event::SequenceEnd => {
                let frame = stack.pop()?;
                let depth = stack.len();
                if let Some(keys) = frame.keys
                    && keys.len() > 1
                    && chosen.as_ref().is_none_or(|(d, _)| depth < *d)
                {
                    chosen = Some((depth, keys));
                }
            }
            _ => {}
        }
    }
    let (_, keys) = chosen?;
    let line_start = |at: usize| text[..at].rfind('\n').map_or(0, |i| i + 1);
    let mut starts = Vec::with_capacity(keys.len());
    for key in keys {
        let start = line_start(key);
        if !text[start..key].bytes().all(|b| b == b' ') {
            return None;
        }
        starts.push(start);
    }
    let head = 0..*starts.first()?;
    Some((starts.into_iter().skip(1).collect(), head))
}
