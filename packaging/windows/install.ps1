# Installs jfgui-agentd, jfgui-agent and the example app jfgui-notepad (for --demo) for the
# current user (no administrator rights) and starts the daemon at every login through a value
# under
#   HKCU\Software\Microsoft\Windows\CurrentVersion\Run
# (per user, no elevation; a Windows service would run in session 0 as the wrong user).
#
#   powershell -ExecutionPolicy Bypass -File packaging\windows\install.ps1 [-BinFrom DIR] [-NoStart]
#
#   -BinFrom DIR  take prebuilt jfgui-agentd.exe, jfgui-agent.exe and jfgui-notepad.exe from DIR
#                 (default: build them with `cargo install --path`)
#   -NoStart      install and register only; do not start the daemon now
#
# Files: %LOCALAPPDATA%\Programs\jfgui-agent\bin (binaries),
#        %LOCALAPPDATA%\jfgui-agent\agentd.log (daemon log, stderr).
# The daemon listens on the named pipes \\.\pipe\jfgui-agent-<your SID>-host and -control,
# readable and writable by your user only. Remove everything with uninstall.ps1.
param(
    [string]$BinFrom = "",
    [switch]$NoStart
)
$ErrorActionPreference = "Stop"

$Root = Join-Path $env:LOCALAPPDATA "Programs\jfgui-agent"
$Bin = Join-Path $Root "bin"
$LogDir = Join-Path $env:LOCALAPPDATA "jfgui-agent"
$Repo = Split-Path -Parent (Split-Path -Parent $PSScriptRoot)
$RunKey = "HKCU:\Software\Microsoft\Windows\CurrentVersion\Run"
$ValueName = "jfgui-agentd"

New-Item -ItemType Directory -Force -Path $Bin, $LogDir | Out-Null
if ($BinFrom -ne "") {
    foreach ($exe in "jfgui-agentd.exe", "jfgui-agent.exe", "jfgui-notepad.exe") {
        Copy-Item -Force (Join-Path $BinFrom $exe) (Join-Path $Bin $exe)
    }
} else {
    cargo install --locked --path (Join-Path $Repo "daemon") --root $Root
    if ($LASTEXITCODE -ne 0) { throw "cargo install (daemon) failed" }
    cargo install --locked --path (Join-Path $Repo "cli") --root $Root
    if ($LASTEXITCODE -ne 0) { throw "cargo install (cli) failed" }
    cargo install --locked --path (Join-Path $Repo "examples\notepad") --root $Root
    if ($LASTEXITCODE -ne 0) { throw "cargo install (notepad) failed" }
}

# The daemon is a console program: start it hidden, with stderr going to the log file.
$Daemon = Join-Path $Bin "jfgui-agentd.exe"
$Log = Join-Path $LogDir "agentd.log"
$Command = "powershell.exe -NoProfile -NonInteractive -WindowStyle Hidden -Command " +
    "`"Start-Process -WindowStyle Hidden -FilePath '$Daemon' -RedirectStandardError '$Log'`""
New-ItemProperty -Path $RunKey -Name $ValueName -Value $Command -PropertyType String -Force | Out-Null
Write-Output "installed jfgui-agentd.exe, jfgui-agent.exe and jfgui-notepad.exe in $Bin"
Write-Output "registered $RunKey\$ValueName: jfgui-agentd starts at every login"

if (-not $NoStart) {
    Start-Process -WindowStyle Hidden -FilePath $Daemon -RedirectStandardError $Log
    Write-Output "jfgui-agentd started (log: $Log)"
}
if (-not (($env:PATH -split ";") -contains $Bin)) {
    Write-Output "note: add $Bin to your PATH to run jfgui-agent"
}
