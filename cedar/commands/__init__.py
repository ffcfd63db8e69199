"""cedar.commands"""
