//! `?`: every key of the keymap in force, over the tab (`Mode::Help`; any
//! key closes it). A view only: the keymap is its state.

pub mod view;
