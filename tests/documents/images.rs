//! Images end to end: a picture with English text made by Pillow, its text
//! read by the worker's tesseract, translated EN→ES by Apertium and
//! painted over; the download is the same type and size (Pillow) and reads
//! in Spanish (tesseract, run here on the output).

use super::*;

const PICTURE: &str = r#"
import sys
from PIL import Image, ImageDraw, ImageFont
im = Image.new("RGB", (900, 260), (245, 245, 245))
d = ImageDraw.Draw(im)
f = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", 32)
d.text((40, 40), "The house is big.", font=f, fill=(30, 30, 30))
d.text((40, 150), "The dog runs in the park.", font=f, fill=(30, 30, 30))
im.save(sys.argv[1], quality=95) if sys.argv[1].endswith(".jpg") else im.save(sys.argv[1])
"#;

/// What tesseract reads of `path` in Spanish, words spaced.
pub(super) async fn read_spanish(path: &std::path::Path) -> Result<String> {
    let out = tokio::process::Command::new("tesseract")
        .arg(path)
        .args(["stdout", "-l", "spa"])
        .output()
        .await
        .context("tesseract (tesseract-ocr: scripts/setup.sh)")?;
    anyhow::ensure!(out.status.success(), "tesseract: {out:?}");
    Ok(String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" "))
}

#[tokio::test]
async fn a_pictures_text_comes_back_in_spanish_in_the_same_picture() -> Result<()> {
    let (world, api, key) = platform("images").await?;
    // The JPEG without source_lang: its language detected from a first
    // reading, then read again with that language's model.
    let cases = [
        ("sign.png", "image/png", Some("EN")),
        ("sign.jpg", "image/jpeg", None),
    ];
    for (name, media_type, source) in cases {
        let mut fields = vec![("target_lang", "ES")];
        fields.extend(source.map(|s| ("source_lang", s)));
        let path = world.path(name);
        python(PICTURE, &[&path]).await?;
        let (content_type, bytes) =
            translated(&api, &key, name, std::fs::read(&path)?, &fields).await?;
        assert_eq!(content_type, media_type, "{name}");
        let out = world.path(&format!("translated-{name}"));
        std::fs::write(&out, &bytes)?;
        let describe = "import sys; from PIL import Image; im = Image.open(sys.argv[1]); print(im.format, im.size)";
        assert_eq!(
            python(describe, &[&out]).await?,
            python(describe, &[&path]).await?,
            "{name}: same type and size"
        );
        let text = read_spanish(&out).await?;
        assert!(text.contains("La casa es grande"), "{name}: {text}");
        assert!(text.contains("parque"), "{name}: {text}");
        assert!(
            !text.contains("house") && !text.contains("The"),
            "{name}: {text}"
        );
    }
    Ok(())
}
