//! The library every GUI app links to expose semantic actions through jfgui-agentd.
#![no_std]
