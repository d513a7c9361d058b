//! A package changed after translation (a machine-translation mark added):
//! parts rewritten or added, with their content types, relationships and
//! custom properties kept consistent; every other entry copied raw, in the
//! original order, and the new ones after them.

use std::collections::BTreeMap;
use std::io::{Cursor, Write};

use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipArchive, ZipWriter};

use super::Package;
use super::entries::{self, damaged, names, open_archive, read_entry, write_error};
use crate::FormatError;
use crate::xml::{self, Elem};

const CONTENT_TYPES: &str = "[Content_Types].xml";
const CUSTOM_PROPERTIES: &str = "docProps/custom.xml";
const CUSTOM_PROPERTIES_TYPE: &str =
    "application/vnd.openxmlformats-officedocument.custom-properties+xml";
const CUSTOM_PROPERTIES_REL: &str =
    "http://schemas.openxmlformats.org/officeDocument/2006/relationships/custom-properties";
const RELATIONSHIPS_NS: &str = "http://schemas.openxmlformats.org/package/2006/relationships";
/// The format id every user-defined custom property carries.
const USER_DEFINED: &str = "{D5CDD505-2E9C-101B-9397-08002B2CF9AE}";

/// A package being changed.
pub(crate) struct Edit<'i> {
    package: &'static Package,
    archive: ZipArchive<Cursor<&'i [u8]>>,
    names: Vec<String>,
    /// Parts rewritten or added, by name.
    changed: BTreeMap<String, String>,
}

impl<'i> Edit<'i> {
    /// Opens a package of `package`'s kind with the checks translation makes.
    pub fn open(package: &'static Package, input: &'i [u8]) -> Result<Self, FormatError> {
        let mut archive = open_archive(package, input)?;
        let names = names(package, &mut archive)?;
        Ok(Self {
            package,
            archive,
            names,
            changed: BTreeMap::new(),
        })
    }

    /// The names of the package's entries, in archive order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Whether a part of this name exists (or has been added).
    pub fn has(&self, name: &str) -> bool {
        self.changed.contains_key(name) || self.names.iter().any(|n| n == name)
    }

    /// The text of a part as it stands (changed or original); `None` when
    /// there is no such part.
    pub fn read(&mut self, name: &str) -> Result<Option<String>, FormatError> {
        if let Some(text) = self.changed.get(name) {
            return Ok(Some(text.clone()));
        }
        let Some(index) = self.names.iter().position(|n| n == name) else {
            return Ok(None);
        };
        let kind = self.package.kind;
        let bytes = read_entry(kind, &mut self.archive, index, name)?;
        let text = String::from_utf8(bytes).map_err(|_| damaged(kind))?;
        Ok(Some(text.trim_start_matches('\u{feff}').to_owned()))
    }

    /// Sets the text of a part (rewritten when it exists, else added).
    pub fn put(&mut self, name: &str, text: String) {
        self.changed.insert(name.to_owned(), text);
    }

    /// A part name no entry has, made from `stem` and `extension`
    /// (`word/tolk-mark1.xml`).
    pub fn free_name(&self, stem: &str, extension: &str) -> String {
        (1..)
            .map(|n| format!("{stem}{n}.{extension}"))
            .find(|name| !self.has(name))
            .unwrap_or_else(|| format!("{stem}.{extension}"))
    }

    /// Declares the content type of a part (an `Override` in
    /// `[Content_Types].xml`).
    pub fn add_content_type(&mut self, part: &str, content_type: &str) -> Result<(), FormatError> {
        let types = self.required(CONTENT_TYPES)?;
        let child = format!(r#"<Override PartName="/{part}" ContentType="{content_type}"/>"#);
        let changed =
            append_to_root(&types, &child).map_err(|e| self.unreadable(CONTENT_TYPES, &e))?;
        self.put(CONTENT_TYPES, changed);
        Ok(())
    }

    /// The parts a part's relationships of `kind` point to, by
    /// relationship id (external targets left out).
    pub fn relationships(
        &mut self,
        source: &str,
        kind: &str,
    ) -> Result<BTreeMap<String, String>, FormatError> {
        let rels_name = rels_of(source);
        let mut found = BTreeMap::new();
        let Some(rels) = self.read(&rels_name)? else {
            return Ok(found);
        };
        let tree = xml::parse(&rels).map_err(|e| self.unreadable(&rels_name, &e))?;
        let Some(root) = xml::root(&tree) else {
            return Ok(found);
        };
        for rel in root.elems() {
            let attr = |key| rel.attr(&rels, key).unwrap_or_default();
            if attr("Type") != kind || attr("TargetMode") == "External" {
                continue;
            }
            found.insert(attr("Id"), resolve(source, &attr("Target")));
        }
        Ok(found)
    }

    /// Adds a relationship from `source` to the part `target` (a package
    /// path); its new id.
    pub fn add_relationship(
        &mut self,
        source: &str,
        kind: &str,
        target: &str,
    ) -> Result<String, FormatError> {
        let rels_name = rels_of(source);
        let rels = self.read(&rels_name)?.unwrap_or_else(|| {
            format!(
                r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="{RELATIONSHIPS_NS}"></Relationships>"#
            )
        });
        let id = (1..)
            .map(|n| format!("rIdTolk{n}"))
            .find(|id| !rels.contains(&format!("\"{id}\"")))
            .unwrap_or_default();
        let relative = relative_to(source, target);
        let child = format!(r#"<Relationship Id="{id}" Type="{kind}" Target="{relative}"/>"#);
        let changed = append_to_root(&rels, &child).map_err(|e| self.unreadable(&rels_name, &e))?;
        self.put(&rels_name, changed);
        Ok(id)
    }

    /// Sets a user-defined text property in `docProps/custom.xml`, made
    /// (with its content type and relationship) when the package has none;
    /// a property of that name already there is left as it is.
    pub fn set_custom_property(&mut self, name: &str, value: &str) -> Result<(), FormatError> {
        let mut value_text = String::new();
        crate::xml::escape_attribute_into(&mut value_text, value, '"');
        let mut name_text = String::new();
        crate::xml::escape_attribute_into(&mut name_text, name, '"');
        let Some(custom) = self.read(CUSTOM_PROPERTIES)? else {
            let part = format!(
                r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/custom-properties" xmlns:vt="http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes"><property fmtid="{USER_DEFINED}" pid="2" name="{name_text}"><vt:lpwstr>{value_text}</vt:lpwstr></property></Properties>"#
            );
            self.put(CUSTOM_PROPERTIES, part);
            self.add_content_type(CUSTOM_PROPERTIES, CUSTOM_PROPERTIES_TYPE)?;
            self.add_relationship("", CUSTOM_PROPERTIES_REL, CUSTOM_PROPERTIES)?;
            return Ok(());
        };
        let tree = xml::parse(&custom).map_err(|e| self.unreadable(CUSTOM_PROPERTIES, &e))?;
        let Some(root) = xml::root(&tree) else {
            return Err(self.unreadable(CUSTOM_PROPERTIES, "it has no root element"));
        };
        let properties: Vec<&Elem<'_>> = root.elems().collect();
        if properties
            .iter()
            .any(|p| p.attr(&custom, "name").as_deref() == Some(name))
        {
            return Ok(());
        }
        let pid = properties
            .iter()
            .filter_map(|p| p.attr(&custom, "pid")?.parse::<u32>().ok())
            .max()
            .unwrap_or(1)
            + 1;
        // The value's prefix is whatever the part binds the types namespace to.
        let vt = prefix_of(
            &custom,
            root,
            "http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes",
        );
        let value_elem = match vt {
            Some(p) => format!("<{p}:lpwstr>{value_text}</{p}:lpwstr>"),
            None => format!(
                r#"<vt:lpwstr xmlns:vt="http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes">{value_text}</vt:lpwstr>"#
            ),
        };
        let own = root.name.split_once(':').map(|(p, _)| format!("{p}:"));
        let own = own.as_deref().unwrap_or("");
        let child = format!(
            r#"<{own}property fmtid="{USER_DEFINED}" pid="{pid}" name="{name_text}">{value_elem}</{own}property>"#
        );
        let changed =
            append_to_root(&custom, &child).map_err(|e| self.unreadable(CUSTOM_PROPERTIES, &e))?;
        self.put(CUSTOM_PROPERTIES, changed);
        Ok(())
    }

    /// The package: changed parts rewritten (with their entries' options),
    /// the rest copied raw, added parts at the end (deflated).
    pub fn finish(mut self) -> Result<Vec<u8>, FormatError> {
        let kind = self.package.kind;
        let mut writer = ZipWriter::new(Cursor::new(Vec::new()));
        for index in 0..self.names.len() {
            let name = self.names[index].clone();
            match self.changed.remove(&name) {
                Some(text) => entries::write(
                    kind,
                    &mut self.archive,
                    index,
                    &name,
                    text.as_bytes(),
                    &mut writer,
                )?,
                None => entries::copy(kind, &mut self.archive, index, &mut writer)?,
            }
        }
        let options = SimpleFileOptions::default().compression_method(CompressionMethod::Deflated);
        for (name, text) in std::mem::take(&mut self.changed) {
            writer.start_file(name, options).map_err(write_error)?;
            writer.write_all(text.as_bytes()).map_err(write_error)?;
        }
        Ok(writer.finish().map_err(write_error)?.into_inner())
    }

    /// A part that must exist.
    fn required(&mut self, name: &str) -> Result<String, FormatError> {
        self.read(name)?
            .ok_or_else(|| self.unreadable(name, "it is missing"))
    }

    /// The error of a part that cannot be read.
    pub fn unreadable(&self, part: &str, why: &str) -> FormatError {
        FormatError::corrupt(format!(
            "The file is not a valid {} document: {part} cannot be read ({why})",
            self.package.kind
        ))
    }
}

/// The relationships part of a part (`word/document.xml` →
/// `word/_rels/document.xml.rels`; the package's own for `""`).
fn rels_of(source: &str) -> String {
    match source.rsplit_once('/') {
        Some((folder, file)) => format!("{folder}/_rels/{file}.rels"),
        None => format!("_rels/{source}.rels"),
    }
}

/// The package path a relationship target of `source` names.
fn resolve(source: &str, target: &str) -> String {
    if let Some(absolute) = target.strip_prefix('/') {
        return absolute.to_owned();
    }
    let mut parts: Vec<&str> = match source.rsplit_once('/') {
        Some((folder, _)) => folder.split('/').collect(),
        None => Vec::new(),
    };
    for piece in target.split('/') {
        match piece {
            "." | "" => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    parts.join("/")
}

/// `target` as a relationship of `source` writes it: relative to the
/// source's folder when it lies below it, else absolute.
fn relative_to(source: &str, target: &str) -> String {
    let folder = source.rsplit_once('/').map_or("", |(f, _)| f);
    if folder.is_empty() {
        return target.to_owned();
    }
    match target
        .strip_prefix(folder)
        .and_then(|t| t.strip_prefix('/'))
    {
        Some(rest) => rest.to_owned(),
        None => format!("/{target}"),
    }
}

/// The prefix `elem` (or its part's root) binds to `namespace`, if any.
fn prefix_of(src: &str, elem: &Elem<'_>, namespace: &str) -> Option<String> {
    elem.attrs(src).into_iter().find_map(|(key, value)| {
        (value == namespace)
            .then(|| key.strip_prefix("xmlns:").map(str::to_owned))
            .flatten()
    })
}

/// `src` with `child` appended as the root element's last child.
pub(crate) fn append_to_root(src: &str, child: &str) -> Result<String, String> {
    let tree = xml::parse(src)?;
    let root = xml::root(&tree).ok_or("it has no root element")?;
    Ok(append_child(src, root, child))
}

/// `src` with `child` appended as `elem`'s last child (an empty-element tag
/// opened and closed for it).
pub(crate) fn append_child(src: &str, elem: &Elem<'_>, child: &str) -> String {
    let mut out = String::with_capacity(src.len() + child.len() + elem.name.len() + 3);
    match &elem.end {
        Some(end) => {
            out.push_str(&src[..end.start]);
            out.push_str(child);
            out.push_str(&src[end.start..]);
        }
        None => {
            let tag = &src[elem.start.clone()];
            let open = tag.trim_end_matches('>').trim_end_matches('/').trim_end();
            out.push_str(&src[..elem.start.start]);
            out.push_str(open);
            out.push('>');
            out.push_str(child);
            out.push_str(&format!("</{}>", elem.name));
            out.push_str(&src[elem.start.end..]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relationship_targets_resolve_against_their_source_and_back() {
        assert_eq!(rels_of("word/document.xml"), "word/_rels/document.xml.rels");
        assert_eq!(rels_of(""), "_rels/.rels");
        assert_eq!(
            resolve("word/document.xml", "header1.xml"),
            "word/header1.xml"
        );
        assert_eq!(
            resolve("ppt/slides/slide1.xml", "../media/a.png"),
            "ppt/media/a.png"
        );
        assert_eq!(resolve("word/document.xml", "/word/h.xml"), "word/h.xml");
        assert_eq!(resolve("", "docProps/custom.xml"), "docProps/custom.xml");
        assert_eq!(relative_to("word/document.xml", "word/h2.xml"), "h2.xml");
        assert_eq!(
            relative_to("", "docProps/custom.xml"),
            "docProps/custom.xml"
        );
        assert_eq!(
            relative_to("word/document.xml", "docProps/x.xml"),
            "/docProps/x.xml"
        );
    }

    #[test]
    fn a_child_goes_last_even_into_an_empty_element() {
        assert_eq!(
            append_to_root("<a x=\"1\"><b/></a>", "<c/>").unwrap(),
            "<a x=\"1\"><b/><c/></a>"
        );
        assert_eq!(
            append_to_root("<?xml version=\"1.0\"?>\n<p:a x=\"1\" />", "<c/>").unwrap(),
            "<?xml version=\"1.0\"?>\n<p:a x=\"1\"><c/></p:a>"
        );
    }
}
