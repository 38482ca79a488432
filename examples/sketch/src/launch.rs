//! "Let agents start Sketch": the setting in the agent bar (and `--let-agents-start on|off`)
//! writes or removes Sketch's launch file, so the daemon starts this program when an agent
//! calls Sketch while it is not running; and whether this window was started that way (then
//! agent access is on from the start, and the agent bar says why).

use jfgui_host_sdk::launch::{
    agents_may_start, let_agents_start_me, started_by_agent, stop_letting_agents_start,
};

/// The setting's state for one display name.
#[derive(Debug)]
pub struct LaunchSetting {
    name: String,
    allowed: bool,
    started_by_agent: bool,
}

impl LaunchSetting {
    /// The setting of `name` as the user's launch files say now.
    pub fn read(name: &str) -> LaunchSetting {
        LaunchSetting {
            name: name.to_string(),
            allowed: agents_may_start(name),
            started_by_agent: started_by_agent(),
        }
    }

    /// Whether agents may start this app.
    pub fn allowed(&self) -> bool {
        self.allowed
    }

    /// Whether the daemon started this process for an agent.
    pub fn started_by_agent(&self) -> bool {
        self.started_by_agent
    }

    /// Turns the setting on (the file starts this program as `--name NAME`) or off.
    pub fn set(&mut self, on: bool) -> Result<(), String> {
        let result = if on {
            let_agents_start_me(&self.name, &["--name", &self.name]).map(drop)
        } else {
            stop_letting_agents_start(&self.name).map(drop)
        };
        result.map_err(|e| e.to_string())?;
        self.allowed = on;
        Ok(())
    }
}
