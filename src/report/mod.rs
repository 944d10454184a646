//! The results of a check and the outputs built from them: terminal text, and the mutation-testing-elements document (typed, `document::Document`) with the JSON, HTML, JUnit, SARIF, GitHub and Markdown reports rendered from it.

pub mod diff;
pub mod document;
pub mod gate;
pub mod github;
pub mod hint;
pub mod html;
pub mod input;
pub mod json;
pub mod junit;
pub mod list;
pub mod markdown;
pub mod merge;
pub mod out;
pub mod sarif;
pub mod test_files;
pub mod text;
