# Undoes install.ps1: stops jfgui-agentd, removes the HKCU Run value and the installed files.
#
#   powershell -ExecutionPolicy Bypass -File packaging\windows\uninstall.ps1
$ErrorActionPreference = "Stop"

$Root = Join-Path $env:LOCALAPPDATA "Programs\jfgui-agent"
$RunKey = "HKCU:\Software\Microsoft\Windows\CurrentVersion\Run"

Remove-ItemProperty -Path $RunKey -Name "jfgui-agentd" -ErrorAction SilentlyContinue
# Only this user's daemon: Get-Process lists other sessions' processes without a path we own.
Get-Process -Name "jfgui-agentd" -ErrorAction SilentlyContinue |
    Where-Object { $_.Path -and $_.Path.StartsWith($Root) } |
    Stop-Process -Force
Remove-Item -Recurse -Force $Root -ErrorAction SilentlyContinue
Write-Output "removed the login entry and $Root (the log in %LOCALAPPDATA%\jfgui-agent is kept)"
