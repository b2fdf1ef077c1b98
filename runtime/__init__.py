"""Platform profiles and the measurement runtime."""
