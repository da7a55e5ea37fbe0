//! `run_command`: a shell command run in the working directory, with a
//! timeout and capped output.
//!
//! The command runs as `sh -c` in a process group of its own, so that a
//! timeout kills everything it started (a `make` and its compilers, a
//! pipeline), not just the shell: killing only the shell would leave its
//! children running and holding the output pipes open. Both pipes are
//! drained on threads while the command runs, so a command writing more
//! than a pipe holds never blocks on a full pipe.

use super::args::{self, Args, Param};
use super::{Tool, ToolClass, ToolError, ToolOutput, ToolSpec, Workspace};
use serde_json::Value;
use std::io::{self, Read};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::{Duration, Instant};

/// How `run_command` runs commands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CommandPolicy {
    /// How long a command may run, output pipes included, before it is
    /// killed.
    pub timeout: Duration,
    /// How much of stdout, and of stderr, the model gets to see (each).
    pub output_cap_bytes: usize,
}

impl Default for CommandPolicy {
    /// 30 seconds; 64 KiB of each stream.
    fn default() -> Self {
        CommandPolicy {
            timeout: Duration::from_secs(30),
            output_cap_bytes: 64 * 1024,
        }
    }
}

/// After a kill, how long the output pipes get to close. They stay open
/// only if a process left the command's group (`setsid`) and holds them.
const KILL_GRACE: Duration = Duration::from_secs(1);
/// The longest pause between checks on a running command.
const MAX_POLL: Duration = Duration::from_millis(20);

/// `run_command`: `sh -c <command>` in the working directory.
#[derive(Debug)]
pub struct RunCommand {
    spec: ToolSpec,
    workspace: Workspace,
    policy: CommandPolicy,
}

impl RunCommand {
    const COMMAND: Param = Param::string(
        "command",
        "The command line, run by `sh -c` in the working directory.",
    );
    const PARAMS: &[Param] = &[Self::COMMAND];

    pub fn new(workspace: Workspace, policy: CommandPolicy) -> RunCommand {
        let description = format!(
            "Run a shell command (`sh -c`) in the working directory, with no input. Returns \
             the exit status, then stdout, then stderr, each cut after {} KiB. A command still \
             running after {:?}, or leaving processes that hold its output open that long, is \
             killed. To start a long-running process, redirect its output (`cmd > log 2>&1 &`).",
            policy.output_cap_bytes / 1024,
            policy.timeout,
        );
        RunCommand {
            spec: args::spec(
                "run_command",
                &description,
                ToolClass::ExecCapable,
                Self::PARAMS,
            ),
            workspace,
            policy,
        }
    }

    fn run(&self, args: &Args<'_>) -> Result<ToolOutput, ToolError> {
        let command = args.string(&Self::COMMAND)?;
        if command.trim().is_empty() {
            return Err(args::invalid(&Self::COMMAND, "must not be empty"));
        }
        let finished = execute(command, self.workspace.root(), &self.policy)
            .map_err(ToolError::io("run", "sh"))?;
        Ok(finished.report(&self.policy))
    }
}

impl Tool for RunCommand {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call(&self, arguments: &Value) -> ToolOutput {
        args::invoke(&self.spec, Self::PARAMS, arguments, |args| self.run(args))
    }
}

/// How a command ended.
#[derive(Debug)]
enum Ending {
    /// It exited, and its output pipes closed, within the timeout.
    Exited(ExitStatus),
    /// It exited, but processes it left running held its output open past
    /// the timeout; they were killed.
    LeftRunning(ExitStatus),
    /// It ran past the timeout and was killed.
    TimedOut,
}

/// A command's ending and output. A stream is `None` when its pipe was
/// still open even after the kill.
#[derive(Debug)]
struct Finished {
    ending: Ending,
    stdout: Option<Captured>,
    stderr: Option<Captured>,
}

/// Runs `command` in `dir` under `policy`.
fn execute(command: &str, dir: &Path, policy: &CommandPolicy) -> io::Result<Finished> {
    let mut group = ProcessGroup::spawn(command, dir)?;
    let stdout = drain(group.child.stdout.take(), policy.output_cap_bytes, "stdout")?;
    let stderr = drain(group.child.stderr.take(), policy.output_cap_bytes, "stderr")?;
    let deadline = Instant::now() + policy.timeout;
    let exit = group.wait_until(deadline)?;
    if exit.is_none() {
        group.kill();
    }
    // The pipes close once every process holding them has exited: usually
    // the shell's exit, but a background process (`server &`) holds them
    // for as long as it runs.
    let mut out = receive_until(&stdout, deadline);
    let mut err = receive_until(&stderr, deadline);
    let mut ending = match exit {
        Some(status) => Ending::Exited(status),
        None => Ending::TimedOut,
    };
    if out.is_none() || err.is_none() {
        if let Ending::Exited(status) = ending {
            ending = Ending::LeftRunning(status);
        }
        group.kill();
        let grace = Instant::now() + KILL_GRACE;
        out = out.or_else(|| receive_until(&stdout, grace));
        err = err.or_else(|| receive_until(&stderr, grace));
    }
    Ok(Finished {
        ending,
        stdout: out,
        stderr: err,
    })
}

/// The shell running a command, leader of the process group of everything
/// the command starts. Dropping it before the shell was reaped kills the
/// group and reaps the shell, so no early return leaves processes behind.
struct ProcessGroup {
    child: Child,
    reaped: bool,
}

impl ProcessGroup {
    fn spawn(command: &str, dir: &Path) -> io::Result<ProcessGroup> {
        let mut shell = Command::new("sh");
        shell
            .arg("-c")
            .arg(command)
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            shell.process_group(0);
        }
        Ok(ProcessGroup {
            child: shell.spawn()?,
            reaped: false,
        })
    }

    /// The shell's exit status, if it exits before `deadline`.
    fn wait_until(&mut self, deadline: Instant) -> io::Result<Option<ExitStatus>> {
        let mut pause = Duration::from_millis(1);
        loop {
            if let Some(status) = self.child.try_wait()? {
                self.reaped = true;
                return Ok(Some(status));
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            thread::sleep(pause.min(deadline - now));
            pause = (pause * 2).min(MAX_POLL);
        }
    }

    /// Kills every process of the group (those still alive; none is an
    /// error). After the shell was reaped its id still names the group as
    /// long as a member lives, and no new process can take it meanwhile.
    fn kill(&mut self) {
        #[cfg(unix)]
        {
            use rustix::process::{Pid, Signal, kill_process_group};
            let _ = kill_process_group(Pid::from_child(&self.child), Signal::KILL);
        }
        #[cfg(not(unix))]
        if !self.reaped {
            let _ = self.child.kill();
        }
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        if !self.reaped {
            self.kill();
            let _ = self.child.wait();
        }
    }
}

/// The first bytes of a stream, and how long it was.
#[derive(Debug, Default)]
struct Captured {
    kept: Vec<u8>,
    total: usize,
}

/// Reads `pipe` to its end on a thread, keeping its first `cap` bytes (and
/// reading on past them, so the writer never blocks); the capture arrives
/// on the returned channel when the pipe closes.
fn drain(
    pipe: Option<impl Read + Send + 'static>,
    cap: usize,
    name: &str,
) -> io::Result<Receiver<Captured>> {
    let (sender, receiver) = mpsc::sync_channel(1);
    let Some(mut pipe) = pipe else {
        let _ = sender.send(Captured::default());
        return Ok(receiver);
    };
    thread::Builder::new()
        .name(format!("run_command {name}"))
        .spawn(move || {
            let mut captured = Captured::default();
            let mut buffer = [0; 8192];
            loop {
                match pipe.read(&mut buffer) {
                    Ok(0) => break,
                    Ok(n) => {
                        let room = cap.saturating_sub(captured.kept.len());
                        captured.kept.extend_from_slice(&buffer[..n.min(room)]);
                        captured.total += n;
                    }
                    Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            // The command's caller may have given up on it: nobody to tell.
            let _ = sender.send(captured);
        })?;
    Ok(receiver)
}

/// The capture from `receiver`, if it arrives before `deadline`.
fn receive_until(receiver: &Receiver<Captured>, deadline: Instant) -> Option<Captured> {
    receiver
        .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        .ok()
}

impl Finished {
    /// What the model reads: a status line, then the stdout and stderr
    /// sections that are not empty.
    fn report(&self, policy: &CommandPolicy) -> ToolOutput {
        let timeout = policy.timeout;
        let (mut content, is_error) = match self.ending {
            Ending::Exited(status) => describe(status),
            Ending::LeftRunning(status) => (
                format!(
                    "{}; processes it left running held its output open past the {timeout:?} \
                     timeout and were killed",
                    describe(status).0
                ),
                true,
            ),
            Ending::TimedOut => (
                format!("timed out after {timeout:?}; the command was killed"),
                true,
            ),
        };
        let sections = [("stdout", &self.stdout), ("stderr", &self.stderr)];
        if sections
            .iter()
            .all(|(_, captured)| captured.as_ref().is_some_and(|c| c.total == 0))
        {
            content.push_str("\n(no output)");
        }
        for (name, captured) in sections {
            section(&mut content, name, captured.as_ref());
        }
        ToolOutput { content, is_error }
    }
}

/// Appends the section of stream `name` to `out`, unless it is empty.
fn section(out: &mut String, name: &str, captured: Option<&Captured>) {
    let Some(captured) = captured else {
        out.push_str(&format!(
            "\n--- {name} ---\n[incomplete: a process outside the command's process group \
             still holds it open]"
        ));
        return;
    };
    if captured.total == 0 {
        return;
    }
    out.push_str(&format!("\n--- {name} ---\n"));
    let text = String::from_utf8_lossy(&captured.kept);
    out.push_str(text.strip_suffix('\n').unwrap_or(&text));
    if captured.total > captured.kept.len() {
        out.push_str(&format!(
            "\n[{name} cut: the first {} of {} bytes are shown]",
            captured.kept.len(),
            captured.total
        ));
    }
}

/// An exit status as the model reads it, and whether it is a failure.
fn describe(status: ExitStatus) -> (String, bool) {
    if let Some(code) = status.code() {
        return (format!("exit status {code}"), code != 0);
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return (format!("killed by signal {signal}"), true);
        }
    }
    (status.to_string(), !status.success())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::tools::{ToolRegistry, coding_tools};

    struct Fixture {
        dir: tempfile::TempDir,
        tools: ToolRegistry,
    }

    impl Fixture {
        fn new(policy: CommandPolicy) -> Fixture {
            let dir = tempfile::tempdir().unwrap();
            let tools = coding_tools(Workspace::new(dir.path()).unwrap(), Some(policy));
            Fixture { dir, tools }
        }

        fn run(&self, command: &str) -> ToolOutput {
            let arguments = serde_json::json!({ "command": command }).to_string();
            self.tools.call("run_command", &arguments)
        }
    }

    fn short_timeout() -> CommandPolicy {
        CommandPolicy {
            timeout: Duration::from_millis(200),
            ..CommandPolicy::default()
        }
    }

    #[test]
    fn the_default_policy() {
        let policy = CommandPolicy::default();
        assert_eq!(policy.timeout, Duration::from_secs(30));
        assert_eq!(policy.output_cap_bytes, 65536);
    }

    #[test]
    fn commands_run_in_the_workdir() {
        let f = Fixture::new(CommandPolicy::default());
        std::fs::write(f.dir.path().join("marker.txt"), "").unwrap();
        let root = std::fs::canonicalize(f.dir.path()).unwrap();
        assert_eq!(
            f.run("pwd -P; ls"),
            ToolOutput::ok(format!(
                "exit status 0\n--- stdout ---\n{}\nmarker.txt",
                root.display()
            ))
        );
    }

    #[test]
    fn exit_status_and_both_streams_are_reported() {
        let f = Fixture::new(CommandPolicy::default());
        assert_eq!(
            f.run("echo out; echo err >&2; exit 3"),
            ToolOutput::error("exit status 3\n--- stdout ---\nout\n--- stderr ---\nerr")
        );
        assert_eq!(
            f.run("echo warning >&2"),
            ToolOutput::ok("exit status 0\n--- stderr ---\nwarning")
        );
        assert_eq!(f.run("true"), ToolOutput::ok("exit status 0\n(no output)"));
        assert_eq!(
            f.run("kill -9 $$"),
            ToolOutput::error("killed by signal 9\n(no output)")
        );
    }

    #[test]
    fn stdin_is_empty() {
        // With an inherited stdin, `cat` would wait for input until the timeout.
        let f = Fixture::new(short_timeout());
        assert_eq!(f.run("cat"), ToolOutput::ok("exit status 0\n(no output)"));
    }

    #[test]
    fn output_is_capped_per_stream() {
        let f = Fixture::new(CommandPolicy {
            output_cap_bytes: 1000,
            ..CommandPolicy::default()
        });
        let out = f.run("head -c 5000 /dev/zero | tr '\\0' x; echo short >&2");
        assert!(!out.is_error, "{}", out.content);
        assert_eq!(
            out.content,
            format!(
                "exit status 0\n--- stdout ---\n{}\n[stdout cut: the first 1000 of 5000 bytes are \
                 shown]\n--- stderr ---\nshort",
                "x".repeat(1000)
            )
        );
    }

    #[test]
    fn lots_of_output_on_both_streams_does_not_block() {
        // Each stream is far more than a pipe holds, stderr first: reading
        // only stdout, or only after the exit, would deadlock until the
        // timeout.
        let f = Fixture::new(CommandPolicy::default());
        let out = f.run("head -c 3000000 /dev/zero >&2; head -c 2000000 /dev/zero; echo done >&2");
        assert!(!out.is_error, "{}", &out.content[..200]);
        assert!(out.content.starts_with("exit status 0\n--- stdout ---\n"));
        assert!(
            out.content
                .contains("[stdout cut: the first 65536 of 2000000 bytes are shown]")
        );
        assert!(
            out.content
                .contains("[stderr cut: the first 65536 of 3000005 bytes are shown]")
        );
    }

    #[test]
    fn a_command_past_the_timeout_is_killed() {
        let f = Fixture::new(short_timeout());
        let out = f.run("echo started; sleep 5; echo finished");
        assert_eq!(
            out,
            ToolOutput::error(
                "timed out after 200ms; the command was killed\n--- stdout ---\nstarted"
            )
        );
        // The whole group was killed, not just the shell: the `sleep` would
        // otherwise still hold the pipe (and the output be incomplete).
        let out = f.run("sleep 5 | sleep 5");
        assert_eq!(
            out,
            ToolOutput::error("timed out after 200ms; the command was killed\n(no output)")
        );
    }

    #[test]
    fn background_processes_holding_the_output_are_killed_at_the_timeout() {
        let f = Fixture::new(short_timeout());
        let out = f.run("sleep 5 & echo launched");
        assert_eq!(
            out,
            ToolOutput::error(
                "exit status 0; processes it left running held its output open past the 200ms \
                 timeout and were killed\n--- stdout ---\nlaunched"
            )
        );
        // Redirected, a background process does not hold the command up.
        let out = f.run("sleep 1 > /dev/null 2>&1 & echo launched");
        assert_eq!(
            out,
            ToolOutput::ok("exit status 0\n--- stdout ---\nlaunched")
        );
    }

    #[test]
    fn bad_commands_are_named() {
        let f = Fixture::new(short_timeout());
        assert_eq!(
            f.run("  "),
            ToolOutput::error("run_command: argument `command` must not be empty")
        );
        assert_eq!(
            f.tools.call("run_command", "{}"),
            ToolOutput::error("run_command: missing argument `command`")
        );
        let out = f.run("definitely-not-a-command-xyz");
        assert!(out.is_error);
        assert!(
            out.content.starts_with("exit status 127\n--- stderr ---\n"),
            "{}",
            out.content
        );
    }
}
