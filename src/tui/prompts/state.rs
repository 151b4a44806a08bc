//! What the Prompts tab holds: the prompts directory as loaded, the filter
//! and the row chosen.

use crate::prompt::PromptConfig;

/// The prompt list.
#[derive(Debug, Default)]
pub struct PromptList {
    /// Loaded prompts, in directory order.
    pub prompts: Vec<PromptConfig>,
    /// Files that did not load.
    pub errors: Vec<String>,
    /// The filter typed after `/` (case-insensitive substring of id,
    /// type, description).
    pub filter: String,
    /// Selected row among the filtered prompts.
    pub selected: usize,
    /// True once the directory was read.
    pub loaded: bool,
}

impl PromptList {
    /// Indexes of the prompts the filter lets through.
    pub fn filtered(&self) -> Vec<usize> {
        let f = self.filter.to_lowercase();
        self.prompts
            .iter()
            .enumerate()
            .filter(|(_, p)| {
                f.is_empty()
                    || p.id.to_lowercase().contains(&f)
                    || p.response_type.as_str().contains(&f)
                    || p.description.to_lowercase().contains(&f)
            })
            .map(|(i, _)| i)
            .collect()
    }

    /// The selected prompt.
    pub fn selected_prompt(&self) -> Option<&PromptConfig> {
        self.filtered().get(self.selected).map(|&i| &self.prompts[i])
    }

    /// A prompt by id.
    pub fn by_id(&self, id: &str) -> Option<&PromptConfig> {
        self.prompts.iter().find(|p| p.id == id)
    }
}
